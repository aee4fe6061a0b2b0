"""Where a real-data figure's datasets and weights are, checked before any training."""

from __future__ import annotations

import os
from pathlib import Path

from attnbias.realdata.errors import MissingDataError, is_fixture

MODEL_KEY = "real_data.models"
TEXT_DATASETS = ("mnli", "civilcomments")
VISION_DATASETS = ("mnist", "cifar10")


def model_source(name_or_path: str) -> dict:
    """A local save_pretrained folder, or a hub name found in the local cache or (where the
    machine has a network and HF_HUB_OFFLINE is unset) on the hub."""
    path = Path(name_or_path)
    if path.is_dir():
        return {"model": name_or_path, "path": str(path.resolve()), "fixture": is_fixture(path)}
    from huggingface_hub import snapshot_download

    offline = os.environ.get("HF_HUB_OFFLINE", "0").lower() not in ("0", "", "false", "no")
    try:
        local = snapshot_download(name_or_path, local_files_only=offline)
    except Exception as err:  # no cache entry, no network, unknown name: all mean "missing"
        raise MissingDataError(
            f"model {name_or_path!r}",
            name_or_path,
            MODEL_KEY,
            "Set the key to a local folder written by `save_pretrained`, or fetch the weights "
            f"on a machine with a network: `huggingface-cli download {name_or_path}` "
            f"(then copy ~/.cache/huggingface). Cause: {type(err).__name__}: {err}",
        ) from None
    return {"model": name_or_path, "path": local, "fixture": is_fixture(local)}


def dataset_source(name: str, root: str, *, download: bool = False) -> dict:
    """The folder of dataset `name` under `root`; MissingDataError when it is not there."""
    if name in VISION_DATASETS:
        from attnbias.realdata.vision import vision_source

        return {"dataset": name, **vision_source(name, root)}
    if name in TEXT_DATASETS:
        from attnbias.realdata.text import text_source

        if name == "civilcomments" and download:  # fetch once here, not in every training job
            from attnbias.realdata.text import load_civilcomments

            load_civilcomments(root, download=True)
        return {"dataset": name, **text_source(name, root)}
    raise ValueError(f"unknown dataset {name!r}; choose one of {TEXT_DATASETS + VISION_DATASETS}")


def check(needs: dict, data_root: str, *, download: bool = False) -> dict:
    """Every dataset and the model a figure needs: {"datasets": [...], "model": ..., "fixture"}.

    "fixture" is true when any of them is a test fixture, so the figure says so.
    """
    datasets = [dataset_source(d, data_root, download=download) for d in needs["datasets"]]
    model = model_source(needs["model"]) if needs.get("model") else None
    parts = [*datasets, *([model] if model else [])]
    return {"datasets": datasets, "model": model, "fixture": any(p["fixture"] for p in parts)}
