"""IDX files (attnbias.data.idx): MNIST round trips, and damaged, truncated or hostile files
refused naming the file.
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest
from fixtures_vision import write_mnist

from attnbias.data.idx import read_idx, read_mnist

# ---------------------------------------------------------------- MNIST (IDX), CIFAR-10


def _idx(tmp_path, header: bytes, body: bytes = b"", gz: bool = False) -> Path:
    path = tmp_path / ("file.gz" if gz else "file")
    if gz:
        with gzip.open(path, "wb") as f:
            f.write(header + body)
    else:
        path.write_bytes(header + body)
    return path


def test_an_intact_idx_file_reads(tmp_path):
    path = _idx(tmp_path, struct.pack(">iiii", 2051, 2, 3, 4), bytes(range(24)), gz=True)
    assert read_idx(path, 2051).shape == (2, 3, 4)


def test_idx_dimensions_that_overflow_int64_are_refused_by_size(tmp_path):
    """2^30 x 2^30 x 16 is 2^64 bytes: 0 in int64, which passed the size check before."""
    path = _idx(tmp_path, struct.pack(">iiii", 2051, 2**30, 2**30, 16))
    with pytest.raises(ValueError, match=rf"{path}: .* 18446744073709551616 bytes, more than"):
        read_idx(path, 2051)


@pytest.mark.parametrize("dims", [(0, 28, 28), (10, -28, 28), (10, 28, 0)])
def test_idx_dimensions_must_be_positive(tmp_path, dims):
    path = _idx(tmp_path, struct.pack(">iiii", 2051, *dims))
    with pytest.raises(ValueError, match=rf"{path}: IDX dimensions .* must all be positive"):
        read_idx(path, 2051)


def test_a_gzip_bomb_is_refused_without_inflating_it(tmp_path, monkeypatch):
    """A small .gz whose header promises 10 labels, followed by 64 MiB of zeros: refused
    after reading one byte past the 10, never inflated whole."""
    path = tmp_path / "labels.gz"
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">ii", 2049, 10))
        for _ in range(64):
            f.write(bytes(2**20))
    assert path.stat().st_size < 2**20
    read_sizes = []
    original = gzip.GzipFile.read

    def counting_read(self, size=-1):
        read_sizes.append(size)
        return original(self, size)

    monkeypatch.setattr(gzip.GzipFile, "read", counting_read)
    with pytest.raises(ValueError, match=rf"{path}: longer than the 18 bytes"):
        read_idx(path, 2049)
    assert read_sizes and max(read_sizes) <= 11 and -1 not in read_sizes


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_round_trip(tmp_path, gz):
    written = write_mnist(tmp_path, n_train=30, n_test=12, seed=0, gz=gz)
    suffix = ".gz" if gz else ""
    assert (tmp_path / "MNIST/raw" / f"train-images-idx3-ubyte{suffix}").is_file()
    read = read_mnist(tmp_path)
    for split in ("train", "test"):
        np.testing.assert_array_equal(read[split][0], written[split][0])
        np.testing.assert_array_equal(read[split][1], written[split][1])
    assert read["train"][0].shape == (30, 28, 28)


def test_mnist_corrupt_header_names_the_file(tmp_path):
    write_mnist(tmp_path, 10, 10, 0, gz=False)
    path = tmp_path / "MNIST/raw/train-images-idx3-ubyte"
    data = bytearray(path.read_bytes())
    data[:4] = struct.pack(">i", 2049)  # a labels magic on an images file
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"{path}.*magic number 2049.*expected 2051"):
        read_mnist(tmp_path)


def test_mnist_truncated_or_mismatched_files_name_the_file(tmp_path):
    write_mnist(tmp_path, 10, 10, 0, gz=True)
    path = tmp_path / "MNIST/raw/t10k-images-idx3-ubyte.gz"
    with gzip.open(path, "rb") as f:
        payload = f.read()
    with gzip.open(path, "wb") as f:
        f.write(payload[:-5])
    with pytest.raises(ValueError, match=rf"{path}.*truncated or corrupt"):
        read_mnist(tmp_path)
    path.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match=rf"{path}: cannot be read"):
        read_mnist(tmp_path)
    # ten images, but eleven labels
    labels = tmp_path / "MNIST/raw/t10k-labels-idx1-ubyte.gz"
    write_mnist(tmp_path, 10, 10, 0, gz=True)
    with gzip.open(labels, "wb") as f:
        f.write(struct.pack(">ii", 2049, 11) + bytes(11))
    with pytest.raises(ValueError, match="10 images but .*11 labels"):
        read_mnist(tmp_path)


def test_read_idx_checks_the_header_size(tmp_path):
    path = tmp_path / "short"
    path.write_bytes(struct.pack(">i", 2051))
    with pytest.raises(ValueError, match="shorter than the IDX header"):
        read_idx(path, 2051)
