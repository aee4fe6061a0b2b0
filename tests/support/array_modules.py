"""A formula written once for numpy and torch (attnbias.model.arrays' style: the array module
its first argument), called on numpy arrays and on float64 tensors of the same values, for
the tests that each module gives the same numbers (tests/model/test_arrays.py,
tests/model/test_delta.py)."""

from __future__ import annotations

import numpy as np
import torch


def both_modules(fn, *args, **kwargs):
    """fn on numpy arrays and on float64 tensors of the same values, as numpy arrays."""
    out_np = fn(np, *args, **kwargs)
    out_torch = fn(torch, *(torch.as_tensor(a) for a in args), **kwargs)
    if isinstance(out_np, tuple):
        return [np.asarray(a) for a in out_np], [t.numpy() for t in out_torch]
    return np.asarray(out_np), out_torch.numpy()
