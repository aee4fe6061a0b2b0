"""Cross-attention instances for the tests (attnbias.model.queries): a dataset of the data
contract with queries Z, and the same tokens with Z = X[:, 0] (self-attention written as
cross-attention) or without Z."""

from __future__ import annotations

import numpy as np

from attnbias.data import models

SMALL = dict(n=6, T=4, d=10)


def with_queries(data: dict, seed: int) -> dict:
    """`data` with queries Z (n, d): unit vectors drawn apart from the tokens (as
    TF-as-SVM's and AttentionMD's data scale theirs), seeded."""
    n, _, d = data["X"].shape
    Z = np.random.default_rng(1000 + seed).standard_normal((n, d))
    return {**data, "Z": Z / np.linalg.norm(Z, axis=1, keepdims=True)}


def cross_instance(seed: int, params: dict = SMALL, model: str = "example1") -> dict:
    """A cross-attention dataset: data model `model`'s tokens, labels and decoder, and
    queries Z that are none of its tokens."""
    return with_queries(models.generate(model, seed, params), seed)


def as_self_attention(data: dict) -> dict:
    """The same tokens with Z = each sequence's first token: self-attention, written out."""
    return {**data, "Z": data["X"][:, 0, :].copy()}


def without_queries(data: dict) -> dict:
    """The same dataset without Z: self-attention, the contract's default."""
    return {key: value for key, value in data.items() if key != "Z"}
