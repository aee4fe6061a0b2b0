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

`read_mnist` and `read_cifar10` give the raw uint8 arrays; `vision_source(name, root)`
checks the files are there (without reading them) and says whether the folder is a test
fixture. No torch here: the data stage (fig9 on MNIST) uses these readers in its own env.
"""

from __future__ import annotations

import gzip
import importlib
import pickle
from pathlib import Path

import numpy as np

from attnbias.realdata.errors import MissingDataError, is_fixture

DATASETS = ("mnist", "cifar10")
CONFIG_KEY = "real_data.data_root"
N_CLASSES = 10

MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
CIFAR_FILES = {
    "train": tuple(f"data_batch_{i}" for i in range(1, 6)),
    "test": ("test_batch",),
}
IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC = 2051, 2049

HOW_TO_GET = {
    "mnist": (
        "Download the four files train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
        "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz from "
        "http://yann.lecun.com/exdb/mnist/ (mirror: https://ossci-datasets.s3.amazonaws.com/"
        "mnist/) into <data_root>/MNIST/raw/ (gzipped or unpacked; torchvision's layout, "
        "so a torchvision download works as is)."
    ),
    "cifar10": (
        "Download https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz and unpack it in "
        "<data_root> (`tar xzf cifar-10-python.tar.gz -C <data_root>`), which gives "
        "<data_root>/cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta}."
    ),
}


def dataset_folder(name: str, root: str | Path) -> Path:
    """The folder holding `name`'s files (and the fixture marker) under `root`."""
    _check_name(name)
    return Path(root) / ("MNIST" if name == "mnist" else "cifar-10-batches-py")


def _check_name(name: str) -> None:
    if name not in DATASETS:
        raise ValueError(f"unknown vision dataset {name!r}; choose one of {DATASETS}")


def _missing(name: str, root: str | Path, missing: list[str]) -> MissingDataError:
    folder = dataset_folder(name, root)
    how = f"Missing: {', '.join(missing)}. {HOW_TO_GET[name]}"
    return MissingDataError(name, folder, CONFIG_KEY, how)


def _mnist_paths(root: str | Path) -> dict[str, tuple[Path, Path]]:
    raw = dataset_folder("mnist", root) / "raw"
    paths, missing = {}, []
    for split, names in MNIST_FILES.items():
        found = []
        for stem in names:
            plain, packed = raw / stem, raw / f"{stem}.gz"
            if plain.is_file():
                found.append(plain)
            elif packed.is_file():
                found.append(packed)
            else:
                missing.append(f"{stem}[.gz]")
        paths[split] = tuple(found)
    if missing:
        raise _missing("mnist", root, missing)
    return paths


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
    _check_name(name)
    (_mnist_paths if name == "mnist" else _cifar_paths)(root)  # raises MissingDataError
    folder = dataset_folder(name, root)
    return {"path": str(folder), "fixture": is_fixture(folder)}


# ---------------------------------------------------------------- MNIST (IDX)


def _read_bytes(path: Path) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as f:
                return f.read()
        return path.read_bytes()
    except (OSError, EOFError) as err:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path}: cannot be read: {err}") from err


def read_idx(path: str | Path, magic: int) -> np.ndarray:
    """An IDX file as a uint8 array: (n, rows, cols) for images (magic 2051), (n,) for
    labels (2049). The header and the size are checked; errors name the file."""
    path = Path(path)
    data = _read_bytes(path)
    ndim = {IDX_IMAGES_MAGIC: 3, IDX_LABELS_MAGIC: 1}[magic]
    header = 4 * (1 + ndim)
    if len(data) < header:
        raise ValueError(f"{path}: {len(data)} bytes, shorter than the IDX header ({header})")
    found, *dims = np.frombuffer(data, dtype=">i4", count=1 + ndim).tolist()
    if found != magic:
        raise ValueError(
            f"{path}: IDX magic number {found} (0x{found & 0xFFFFFFFF:08x}), expected {magic} "
            f"(0x{magic:08x}, uint8 with {ndim} dimension(s)): not this kind of MNIST file"
        )
    expected = header + int(np.prod(dims))
    if len(data) != expected:
        raise ValueError(
            f"{path}: {len(data)} bytes, but the header ({' x '.join(map(str, dims))}) "
            f"implies {expected}: the file is truncated or corrupt"
        )
    # a copy: arrays over the bytes read are read-only, which torch.from_numpy warns about
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims).copy()


def read_mnist(root: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"train"|"test": (images uint8 (N, 28, 28), labels uint8 (N,))}, as stored."""
    out = {}
    for split, (images_path, labels_path) in _mnist_paths(root).items():
        images = read_idx(images_path, IDX_IMAGES_MAGIC)
        labels = read_idx(labels_path, IDX_LABELS_MAGIC)
        if len(images) != len(labels):
            raise ValueError(
                f"{images_path} holds {len(images)} images but {labels_path} {len(labels)} labels"
            )
        _check_labels(labels, labels_path)
        out[split] = (images, labels)
    return out


def _check_labels(labels: np.ndarray, path: Path) -> None:
    if labels.size and (labels.min() < 0 or labels.max() >= N_CLASSES):
        raise ValueError(
            f"{path}: labels range over {labels.min()}..{labels.max()}, expected 0..{N_CLASSES - 1}"
        )


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


def read_cifar_batch(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR-10 batch: (images uint8 (N, 3, 32, 32), labels int64 (N,)). Errors name
    the file."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            batch = _ArraysOnly(f, encoding="bytes").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as err:
        raise ValueError(f"{path}: not a CIFAR-10 python batch ({err})") from err
    if not isinstance(batch, dict):
        raise ValueError(f"{path}: not a CIFAR-10 python batch (a {type(batch).__name__})")
    batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
    if "data" not in batch or "labels" not in batch:
        raise ValueError(f"{path}: no 'data' or 'labels' entry (has {sorted(batch)})")
    data, labels = np.asarray(batch["data"]), np.asarray(batch["labels"], dtype=np.int64)
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise ValueError(f"{path}: data is {data.dtype} {data.shape}, expected uint8 (N, 3072)")
    if labels.shape != (len(data),):
        raise ValueError(f"{path}: {len(data)} images but labels of shape {labels.shape}")
    _check_labels(labels, path)
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
