"""MNIST (IDX) and CIFAR-10 (pickle batches) readers against fixtures in the real formats."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from fixtures_vision import write_cifar10, write_mnist

from attnbias.realdata.errors import FIXTURE_MARKER
from attnbias.realdata.vision_files import read_cifar10, read_cifar_batch, vision_source


def _cifar_batch(tmp_path, batch) -> Path:
    write_cifar10(tmp_path, 10, 5, 0)
    path = tmp_path / "cifar-10-batches-py/data_batch_2"
    path.write_bytes(pickle.dumps(batch, protocol=2))
    return path


@pytest.mark.parametrize(
    "labels, why",
    [
        (["cat", "dog"], "labels are a list holding str"),
        ([0.5, 1.5], "labels are a list holding float"),
        ("01", "labels are a str"),
        ({0: 1}, "labels are a dict"),
        (np.array([0.0, 1.0]), "labels are a ndarray"),
    ],
)
def test_cifar_labels_of_the_wrong_type_name_the_file(tmp_path, labels, why):
    path = _cifar_batch(tmp_path, {b"data": np.zeros((2, 3072), np.uint8), b"labels": labels})
    with pytest.raises(ValueError, match=rf"{path}: {why}"):
        read_cifar10(tmp_path)


@pytest.mark.parametrize("data", [[[0] * 3072] * 2, b"\x00" * 6144, None])
def test_cifar_data_of_the_wrong_type_names_the_file(tmp_path, data):
    path = _cifar_batch(tmp_path, {b"data": data, b"labels": [0, 1]})
    with pytest.raises(ValueError, match=rf"{path}: data is a"):
        read_cifar10(tmp_path)


def test_a_cifar_batch_with_a_non_utf8_key_names_the_file_and_the_fix(tmp_path):
    """The trial's case (a UnicodeDecodeError before): the key shown escaped."""
    path = _cifar_batch(tmp_path, {b"d\xffta": np.zeros((2, 3072), np.uint8), b"labels": [0, 1]})
    with pytest.raises(ValueError) as err:
        read_cifar10(tmp_path)
    message = str(err.value)
    assert message.startswith(f"{path}: no 'data' or 'labels' entry (has 'd\\\\xffta', "), message
    assert "cifar-10-python.tar.gz" in message


def test_an_unreadable_cifar_batch_names_the_file(tmp_path):
    write_cifar10(tmp_path, 10, 5, 0)
    path = tmp_path / "cifar-10-batches-py/data_batch_2"
    path.unlink()
    path.mkdir()  # exists, but cannot be opened as a file
    with pytest.raises(ValueError, match=rf"{path}: cannot be read"):
        read_cifar_batch(path)


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
