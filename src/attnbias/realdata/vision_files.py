"""MNIST's IDX files and CIFAR-10's python batches, read with numpy alone.

The project does without torchvision (beside the CPU build of torch its only wheels are
CUDA builds, and transformers breaks once it is installed: docs/environment.md), so the
two formats are read directly, from torchvision's layout under the config's
`real_data.data_root`:

  <root>/MNIST/raw/{train,t10k}-images-idx3-ubyte[.gz], {train,t10k}-labels-idx1-ubyte[.gz]
      IDX: big-endian int32 magic (2051 images, 2049 labels), the count, for images rows
      and cols, then uint8 values row-major.
  <root>/cifar-10-batches-py/{data_batch_1..5,test_batch}
      Python pickles of dicts with b"data", uint8 (N, 3072): each row the 1024 red, then
      green, then blue values of a 32x32 image, row-major; and b"labels", N ints.

`read_mnist` (from `attnbias.data.idx`, which the data stage's fig9 on MNIST uses too) and
`read_cifar10` give the raw uint8 arrays; `vision_source(name, root)` checks the files are
there (without reading them) and says whether the folder is a test fixture. No torch here.
"""

from __future__ import annotations

import importlib
import pickle
from pathlib import Path

import numpy as np

from attnbias.data.idx import (
    CONFIG_KEY,
    MNIST_DIR,
    MNIST_HOW,
    check_labels,
    mnist_paths,
)
from attnbias.data.missing import MissingDataError
from attnbias.realdata.errors import is_fixture

DATASETS = ("mnist", "cifar10")

CIFAR_FILES = {
    "train": tuple(f"data_batch_{i}" for i in range(1, 6)),
    "test": ("test_batch",),
}

HOW_TO_GET = {
    "mnist": MNIST_HOW,
    "cifar10": (
        "Download https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz and unpack it in "
        "<data_root> (`tar xzf cifar-10-python.tar.gz -C <data_root>`), which gives "
        "<data_root>/cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta}."
    ),
}


def dataset_folder(name: str, root: str | Path) -> Path:
    """The folder holding `name`'s files (and the fixture marker) under `root`."""
    check_name(name)
    return Path(root) / (MNIST_DIR if name == "mnist" else "cifar-10-batches-py")


def check_name(name: str) -> None:
    """A ValueError naming the known vision datasets where `name` is none of them."""
    if name not in DATASETS:
        raise ValueError(f"unknown vision dataset {name!r}; choose one of {DATASETS}")


def _missing(name: str, root: str | Path, missing: list[str]) -> MissingDataError:
    folder = dataset_folder(name, root)
    how = f"Missing: {', '.join(missing)}. {HOW_TO_GET[name]}"
    return MissingDataError(name, folder, CONFIG_KEY, how)


def _cifar_paths(root: str | Path) -> dict[str, tuple[Path, ...]]:
    folder = dataset_folder("cifar10", root)
    paths = {split: tuple(folder / n for n in names) for split, names in CIFAR_FILES.items()}
    missing = [p.name for group in paths.values() for p in group if not p.is_file()]
    if missing:
        raise _missing("cifar10", root, missing)
    return paths


def vision_source(name: str, root: str | Path) -> dict:
    """{"path": the dataset folder, "fixture": written by the tests?}; raises MissingDataError
    when a file is missing. Reads no data."""
    check_name(name)
    (mnist_paths if name == "mnist" else _cifar_paths)(root)  # raises MissingDataError
    folder = dataset_folder(name, root)
    return {"path": str(folder), "fixture": is_fixture(folder)}


# ---------------------------------------------------------------- MNIST (IDX)


# ---------------------------------------------------------------- CIFAR-10 (pickles)

# Unpickling can run arbitrary code, so only what the CIFAR batches need may be loaded:
# numpy arrays (old and new numpy module paths) and bytes (py3 protocol-2 pickles).
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("_codecs", "encode"),
}


class _ArraysOnly(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}")
        if module.startswith("numpy.core.") and hasattr(np, "_core"):
            module = "numpy._core." + module.removeprefix("numpy.core.")  # numpy 2 name
        return getattr(importlib.import_module(module), name)


def _integer_labels(labels) -> bool:
    """A list of Python ints (CIFAR's format) or an integer array."""
    if isinstance(labels, np.ndarray):
        return labels.dtype.kind in "iu"
    return isinstance(labels, list) and all(type(v) is int for v in labels)


def read_cifar_batch(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR-10 batch: (images uint8 (N, 3, 32, 32), labels int64 (N,)). Errors name
    the file."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            batch = _ArraysOnly(f, encoding="bytes").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as err:
        raise ValueError(f"{path}: not a CIFAR-10 python batch ({err})") from err
    except (OSError, MemoryError, RecursionError) as err:
        raise ValueError(f"{path}: cannot be read ({type(err).__name__}: {err})") from err
    if not isinstance(batch, dict):
        raise ValueError(f"{path}: not a CIFAR-10 python batch (a {type(batch).__name__})")
    # CIFAR's keys are ASCII bytes; any other byte is shown escaped, never decoded into an error
    batch = {k.decode("utf-8", "backslashreplace") if isinstance(k, bytes) else k: v
             for k, v in batch.items()}  # fmt: skip
    if "data" not in batch or "labels" not in batch:
        keys = sorted(map(repr, batch))
        raise ValueError(
            f"{path}: no 'data' or 'labels' entry (has {', '.join(keys)}), not a CIFAR-10 "
            f"python batch; replace the folder with CIFAR-10's own: {HOW_TO_GET['cifar10']}"
        )
    data, labels = batch["data"], batch["labels"]
    if not isinstance(data, np.ndarray):
        raise ValueError(f"{path}: data is a {type(data).__name__}, not a uint8 array")
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise ValueError(f"{path}: data is {data.dtype} {data.shape}, expected uint8 (N, 3072)")
    if not _integer_labels(labels):
        kinds = sorted({type(v).__name__ for v in labels}) if isinstance(labels, list) else []
        what = f"a list holding {', '.join(kinds)}" if kinds else f"a {type(labels).__name__}"
        raise ValueError(f"{path}: labels are {what}, not a list of integers")
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (len(data),):
        raise ValueError(f"{path}: {len(data)} images but labels of shape {labels.shape}")
    check_labels(labels, path)
    # each row: 1024 red values, 1024 green, 1024 blue, each 32x32 row-major
    return data.reshape(-1, 3, 32, 32), labels


def read_cifar10(root: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"train"|"test": (images uint8 (N, 3, 32, 32), labels int64 (N,))}, as stored."""
    out = {}
    for split, paths in _cifar_paths(root).items():
        batches = [read_cifar_batch(p) for p in paths]
        out[split] = (
            np.concatenate([b[0] for b in batches]),
            np.concatenate([b[1] for b in batches]),
        )
    return out


# ---------------------------------------------------------------- normalised splits


def channel_stats(images: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per-channel mean and std of uint8 images (N, C, H, W), in units of pixel / 255.

    Counted exactly from a 256-bin histogram per channel, so the 150M values of CIFAR-10's
    train split need no float copy."""
    means, stds = [], []
    values = np.arange(256, dtype=np.float64) / 255.0
    for c in range(images.shape[1]):
        counts = np.bincount(images[:, c].ravel(), minlength=256).astype(np.float64)
        total = counts.sum()
        mean = float(counts @ values / total)
        var = float(counts @ (values - mean) ** 2 / total)
        means.append(mean)
        stds.append(var**0.5 if var > 0 else 1.0)  # a constant channel stays centred only
    return tuple(means), tuple(stds)
