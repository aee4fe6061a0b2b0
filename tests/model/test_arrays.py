"""The formulas written once for numpy and torch (model.arrays, model.delta): each gives
the same numbers from either array module, and the plain formula wherever that one is
representable.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from attnbias.model import arrays

RNG = np.random.default_rng(3)


X = RNG.normal(scale=30.0, size=(4, 6))


def _both(fn, *args, **kwargs):
    """fn on numpy arrays and on float64 tensors of the same values, as numpy arrays."""
    out_np = fn(np, *args, **kwargs)
    out_torch = fn(torch, *(torch.as_tensor(a) for a in args), **kwargs)
    if isinstance(out_np, tuple):
        return [np.asarray(a) for a in out_np], [t.numpy() for t in out_torch]
    return np.asarray(out_np), out_torch.numpy()


def test_logsumexp_equals_torch_with_infinities():
    x = np.vstack([X, np.full(6, -math.inf), [1.0, math.inf, 0, 0, 0, 0]])
    ours, theirs = _both(arrays.logsumexp, x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-15)
    assert ours[-2] == -math.inf and ours[-1] == math.inf
    np.testing.assert_allclose(ours[:4], np.log(np.exp(X).sum(-1)), rtol=1e-12)


def test_log_softmax_equals_torch_and_the_plain_formula():
    ours, theirs = _both(arrays.log_softmax, X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=1e-14)
    plain = np.log(np.exp(X / 30) / np.exp(X / 30).sum(-1, keepdims=True))
    np.testing.assert_allclose(arrays.log_softmax(np, X / 30), plain, rtol=1e-12)
