"""Vision data (attnbias.realdata.vision): normalised with train statistics; missing files named."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fixtures_vision import write_cifar10, write_mnist

from attnbias.data.missing import MissingDataError
from attnbias.realdata.vision import load_vision
from attnbias.realdata.vision_files import vision_source


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
