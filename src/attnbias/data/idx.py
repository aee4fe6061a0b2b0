"""MNIST's IDX files, read with numpy alone: the synthetic data stage (fig9 on MNIST digits,
`attnbias.data.models`) and the real-data figures (`attnbias.realdata.vision_files`) share it.

  <root>/MNIST/raw/{train,t10k}-images-idx3-ubyte[.gz], {train,t10k}-labels-idx1-ubyte[.gz]
      IDX: big-endian int32 magic (2051 images, 2049 labels), the count, for images rows
      and cols, then uint8 values row-major (torchvision's layout).
"""

from __future__ import annotations

import gzip
import math
import zlib
from pathlib import Path

import numpy as np

from attnbias.data.missing import MissingDataError

CONFIG_KEY = "real_data.data_root"
N_CLASSES = 10
MNIST_DIR = "MNIST"
MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC = 2051, 2049
MNIST_HOW = (
    "Download the four files train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
    "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz from "
    "http://yann.lecun.com/exdb/mnist/ (mirror: https://ossci-datasets.s3.amazonaws.com/"
    "mnist/) into <data_root>/MNIST/raw/ (gzipped or unpacked; torchvision's layout, "
    "so a torchvision download works as is)."
)


def check_labels(labels: np.ndarray, path: Path) -> None:
    """Class labels must lie in 0..9; the error names the file."""
    if labels.size and (labels.min() < 0 or labels.max() >= N_CLASSES):
        raise ValueError(
            f"{path}: labels range over {labels.min()}..{labels.max()}, expected 0..{N_CLASSES - 1}"
        )


def mnist_paths(root: str | Path) -> dict[str, tuple[Path, Path]]:
    """The four files under <root>/MNIST/raw/, gzipped or not; MissingDataError when any is not
    there."""
    raw = Path(root) / MNIST_DIR / "raw"
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
        how = f"Missing: {', '.join(missing)}. {MNIST_HOW}"
        raise MissingDataError("mnist", Path(root) / MNIST_DIR, CONFIG_KEY, how)
    return paths


# The largest IDX file read: MNIST's biggest is 47 MB; a header that implies more (or a
# gzip stream that inflates past what its header implies) is refused, never inflated whole.
MAX_IDX_BYTES = 2**31


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")


def read_idx(path: str | Path, magic: int) -> np.ndarray:
    """An IDX file as a uint8 array: (n, rows, cols) for images (magic 2051), (n,) for
    labels (2049). The header (magic, positive dimensions, a size at most MAX_IDX_BYTES,
    computed in Python integers) is checked before the values are read, and exactly that
    many bytes must follow; errors name the file."""
    path = Path(path)
    ndim = {IDX_IMAGES_MAGIC: 3, IDX_LABELS_MAGIC: 1}[magic]
    header = 4 * (1 + ndim)
    try:
        with _open(path) as f:
            head = f.read(header)
            if len(head) < header:
                raise ValueError(
                    f"{path}: {len(head)} bytes, shorter than the IDX header ({header})"
                )
            found, *dims = (int(v) for v in np.frombuffer(head, dtype=">i4"))
            _check_header(path, found, dims, magic, ndim)
            size = math.prod(dims)  # Python integers: no overflow
            data = f.read(size + 1)  # one byte more: a longer file is refused, not cut
    except (OSError, EOFError, zlib.error) as err:  # gzip.BadGzipFile is an OSError
        raise ValueError(f"{path}: cannot be read: {err}") from err
    shape = " x ".join(map(str, dims))
    if len(data) > size:
        raise ValueError(
            f"{path}: longer than the {header + size} bytes its header ({shape}) implies: "
            "not an IDX file of that shape"
        )
    if len(data) < size:
        raise ValueError(
            f"{path}: {header + len(data)} bytes, but the header ({shape}) implies "
            f"{header + size}: the file is truncated or corrupt"
        )
    return np.frombuffer(data, dtype=np.uint8).reshape(dims).copy()  # a copy: writable


def _check_header(path: Path, found: int, dims: list[int], magic: int, ndim: int) -> None:
    if found != magic:
        raise ValueError(
            f"{path}: IDX magic number {found} (0x{found & 0xFFFFFFFF:08x}), expected {magic} "
            f"(0x{magic:08x}, uint8 with {ndim} dimension(s)): not this kind of MNIST file"
        )
    if any(d <= 0 for d in dims):
        raise ValueError(f"{path}: IDX dimensions {dims} must all be positive")
    if math.prod(dims) > MAX_IDX_BYTES:
        raise ValueError(
            f"{path}: the IDX header's dimensions {' x '.join(map(str, dims))} imply "
            f"{math.prod(dims)} bytes, more than the {MAX_IDX_BYTES} any MNIST file holds"
        )


def read_mnist(root: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"train"|"test": (images uint8 (N, 28, 28), labels uint8 (N,))}, as stored."""
    out = {}
    for split, (images_path, labels_path) in mnist_paths(root).items():
        images = read_idx(images_path, IDX_IMAGES_MAGIC)
        labels = read_idx(labels_path, IDX_LABELS_MAGIC)
        if len(images) != len(labels):
            raise ValueError(
                f"{images_path} holds {len(images)} images but {labels_path} {len(labels)} labels"
            )
        check_labels(labels, labels_path)
        out[split] = (images, labels)
    return out
