"""Tiny MNIST and CIFAR-10 stand-ins written in the real on-disk formats.

Written from the formats' published descriptions (LeCun's IDX page, Krizhevsky's CIFAR
page), not with attnbias code, so the readers are tested against an independent writer.
Each class has its own random mean image; every sample is its class's image plus noise,
so a model can learn the classes. The dataset folders carry the fixture marker.
"""

from __future__ import annotations

import gzip
import pickle
import struct
from pathlib import Path

import numpy as np

from attnbias.realdata.errors import mark_fixture

CIFAR_NAMES = [
    b"airplane",
    b"automobile",
    b"bird",
    b"cat",
    b"deer",
    b"dog",
    b"frog",
    b"horse",
    b"ship",
    b"truck",
]


def _samples(rng, n: int, templates: np.ndarray, noise: float):
    labels = rng.permutation(np.arange(n) % len(templates))
    images = templates[labels] + rng.normal(0.0, noise, (n, *templates.shape[1:]))
    return np.clip(np.rint(images), 0, 255).astype(np.uint8), labels.astype(np.uint8)


def write_mnist(root, n_train: int, n_test: int, seed: int, gz: bool = True):
    """<root>/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz], with n_train and
    n_test 28x28 images. Returns {"train"|"test": (images uint8 (N, 28, 28), labels uint8)}."""
    rng = np.random.default_rng(seed)
    templates = rng.integers(0, 256, (10, 28, 28)).astype(np.float64)
    raw = Path(root) / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    written = {}
    for split, prefix, n in (("train", "train", n_train), ("test", "t10k", n_test)):
        images, labels = _samples(rng, n, templates, noise=40.0)
        # IDX: big-endian int32 magic (0x00000803: uint8, 3 dims), then each dimension
        files = {
            f"{prefix}-images-idx3-ubyte": struct.pack(">iiii", 2051, n, 28, 28) + images.tobytes(),
            f"{prefix}-labels-idx1-ubyte": struct.pack(">ii", 2049, n) + labels.tobytes(),
        }
        for name, payload in files.items():
            if gz:
                with gzip.open(raw / f"{name}.gz", "wb") as f:
                    f.write(payload)
            else:
                (raw / name).write_bytes(payload)
        written[split] = (images, labels)
    mark_fixture(raw.parent)
    return written


def write_cifar10(root, n_train: int, n_test: int, seed: int):
    """<root>/cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}, n_train
    images spread over the five training batches. Returns {"train"|"test": (data uint8
    (N, 3072) as stored, labels int64)}."""
    if n_train < 5:
        raise ValueError("write_cifar10 needs n_train >= 5 (one image per training batch)")
    rng = np.random.default_rng(seed)
    templates = rng.integers(0, 256, (10, 3072)).astype(np.float64)
    folder = Path(root) / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for split, n in (("train", n_train), ("test", n_test)):
        data, labels = _samples(rng, n, templates, noise=40.0)
        written[split] = (data, labels.astype(np.int64))
    batches = [
        (f"data_batch_{i + 1}", f"training batch {i + 1} of 5", part)
        for i, part in enumerate(np.array_split(np.arange(n_train), 5))
    ]
    batches.append(("test_batch", "testing batch 1 of 1", np.arange(n_test)))
    for name, title, index in batches:
        data, labels = written["test" if name == "test_batch" else "train"]
        # the official batches: protocol-2 pickles of dicts with bytes keys; data is
        # uint8 (N, 3072), each row 1024 red, 1024 green, 1024 blue values, row-major
        batch = {
            b"batch_label": title.encode(),
            b"labels": [int(v) for v in labels[index]],
            b"data": data[index],
            b"filenames": [f"fixture_{i}.png".encode() for i in index],
        }
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
    meta = {
        b"num_cases_per_batch": len(batches[0][2]),
        b"label_names": CIFAR_NAMES,
        b"num_vis": 3072,
    }
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=2))
    mark_fixture(folder)
    return written
