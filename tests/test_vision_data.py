"""MNIST (IDX) and CIFAR-10 (pickle batches) readers against fixtures in the real formats."""

from __future__ import annotations

import gzip
import os
import pickle
import shutil
import struct

import numpy as np
import pytest
import torch
from fixtures_vision import write_cifar10, write_mnist

from attnbias.data.idx import read_idx, read_mnist
from attnbias.data.missing import MissingDataError
from attnbias.realdata.errors import FIXTURE_MARKER
from attnbias.realdata.vision import load_vision
from attnbias.realdata.vision_files import read_cifar10, vision_source


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


def test_cifar_round_trip_keeps_the_rgb_row_major_layout(tmp_path):
    written = write_cifar10(tmp_path, n_train=23, n_test=7, seed=1)
    read = read_cifar10(tmp_path)
    for split, n in (("train", 23), ("test", 7)):
        images, labels = read[split]
        data, expected_labels = written[split]
        assert images.shape == (n, 3, 32, 32) and images.dtype == np.uint8
        np.testing.assert_array_equal(labels, expected_labels)
        # pixel (c, h, w) of image i is byte c * 1024 + h * 32 + w of row i
        for i, c, h, w in [(0, 0, 0, 0), (n - 1, 2, 31, 31), (n // 2, 1, 5, 17)]:
            assert images[i, c, h, w] == data[i, c * 1024 + h * 32 + w]


@pytest.mark.parametrize("name", ["mnist", "cifar10"])
def test_load_vision_normalises_both_splits_with_train_statistics(tmp_path, name):
    if name == "mnist":
        raw = {k: (v[0][:, None], v[1]) for k, v in write_mnist(tmp_path, 40, 10, 2).items()}
    else:
        raw = {
            k: (v[0].reshape(-1, 3, 32, 32), v[1])
            for k, v in write_cifar10(tmp_path, 40, 10, 2).items()
        }
    splits = load_vision(name, tmp_path)
    channels = 1 if name == "mnist" else 3
    train_pixels = raw["train"][0].astype(np.float64) / 255
    mean = train_pixels.mean(axis=(0, 2, 3))
    std = train_pixels.std(axis=(0, 2, 3))
    np.testing.assert_allclose(splits["train"].mean, mean, rtol=1e-12)
    np.testing.assert_allclose(splits["test"].std, std, rtol=1e-12)
    for split in ("train", "test"):
        s = splits[split]
        assert s.images.dtype == torch.float32 and s.labels.dtype == torch.int64
        assert s.images.shape[1] == channels and len(s) == len(raw[split][1])
        expected = (raw[split][0] / 255 - mean[None, :, None, None]) / std[None, :, None, None]
        np.testing.assert_allclose(s.images.numpy(), expected, atol=1e-5)
        np.testing.assert_array_equal(s.labels.numpy(), raw[split][1])
    per_channel = splits["train"].images.transpose(0, 1).reshape(channels, -1)
    np.testing.assert_allclose(per_channel.mean(1).numpy(), 0, atol=1e-5)
    np.testing.assert_allclose(per_channel.std(1, unbiased=False).numpy(), 1, atol=1e-5)


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


def test_cifar_bad_batch_names_the_file(tmp_path):
    write_cifar10(tmp_path, 10, 5, 0)
    path = tmp_path / "cifar-10-batches-py/data_batch_3"
    bad = {b"data": np.zeros((2, 100), np.uint8), b"labels": [0, 1]}
    path.write_bytes(pickle.dumps(bad, protocol=2))
    with pytest.raises(ValueError, match=rf"{path}: data is uint8 \(2, 100\)"):
        read_cifar10(tmp_path)
    path.write_bytes(b"garbage")
    with pytest.raises(ValueError, match=rf"{path}: not a CIFAR-10 python batch"):
        read_cifar10(tmp_path)


def test_cifar_pickle_may_not_run_code(tmp_path):
    """A batch that would call a function when unpickled is refused, not executed."""
    write_cifar10(tmp_path, 10, 5, 0)
    marker = tmp_path / "executed"

    class Exploit:
        def __reduce__(self):
            return (os.makedirs, (str(marker),))

    path = tmp_path / "cifar-10-batches-py/test_batch"
    path.write_bytes(pickle.dumps({b"data": Exploit(), b"labels": []}, protocol=2))
    with pytest.raises(ValueError, match="refusing to load posix.makedirs|refusing to load os"):
        read_cifar10(tmp_path)
    assert not marker.exists()


@pytest.mark.parametrize("name, url", [("mnist", "exdb/mnist"), ("cifar10", "cifar-10-python")])
def test_missing_data_error_says_what_where_and_how(tmp_path, name, url):
    with pytest.raises(MissingDataError) as err:
        load_vision(name, tmp_path / "nowhere")
    message = str(err.value)
    assert message.startswith(f"{name}: not found at {tmp_path / 'nowhere'}")
    assert "real_data.data_root" in message and url in message
    assert err.value.dataset == name and err.value.key == "real_data.data_root"
    with pytest.raises(MissingDataError):
        vision_source(name, tmp_path / "nowhere")


def test_one_missing_file_is_named(tmp_path):
    write_cifar10(tmp_path, 10, 5, 0)
    (tmp_path / "cifar-10-batches-py/data_batch_4").unlink()
    with pytest.raises(MissingDataError, match="Missing: data_batch_4"):
        load_vision("cifar10", tmp_path)
    write_mnist(tmp_path, 10, 5, 0)
    (tmp_path / "MNIST/raw/t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(MissingDataError, match=r"Missing: t10k-labels-idx1-ubyte\[\.gz\]"):
        vision_source("mnist", tmp_path)


def test_vision_source_reports_path_and_fixture_flag(tmp_path):
    write_mnist(tmp_path / "a", 10, 5, 0)
    write_cifar10(tmp_path / "a", 10, 5, 0)
    assert vision_source("mnist", tmp_path / "a") == {
        "path": str(tmp_path / "a/MNIST"),
        "fixture": True,
    }
    assert vision_source("cifar10", tmp_path / "a")["fixture"] is True
    # the same files without the marker: taken as real data
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    (tmp_path / "b/cifar-10-batches-py" / FIXTURE_MARKER).unlink()
    assert vision_source("cifar10", tmp_path / "b") == {
        "path": str(tmp_path / "b/cifar-10-batches-py"),
        "fixture": False,
    }
    with pytest.raises(ValueError, match="unknown vision dataset 'svhn'"):
        vision_source("svhn", tmp_path / "a")
