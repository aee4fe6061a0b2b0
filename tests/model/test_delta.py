"""attnbias.model.delta: the attention gap in logs, kept far below rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnbias.model import arrays
from attnbias.model.delta import delta_in_logs

RNG = np.random.default_rng(3)


def _both(fn, *args, **kwargs):
    """fn on numpy arrays and on float64 tensors of the same values, as numpy arrays."""
    out_np = fn(np, *args, **kwargs)
    out_torch = fn(torch, *(torch.as_tensor(a) for a in args), **kwargs)
    if isinstance(out_np, tuple):
        return [np.asarray(a) for a in out_np], [t.numpy() for t in out_torch]
    return np.asarray(out_np), out_torch.numpy()


@pytest.mark.parametrize("signed", [False, True])
def test_delta_in_logs_is_sum_of_attention_times_gap(signed):
    logits = RNG.normal(size=(3, 5))
    gap = np.abs(RNG.normal(size=(3, 5)))
    if signed:
        gap[:, 1] *= -1.0
    gap[:, 0] = 0.0  # the optimal token's own gap
    log_attn = arrays.log_softmax(np, logits)
    with np.errstate(divide="ignore"):
        log_abs_gap = np.log(np.abs(gap))
    ours, theirs = _both(delta_in_logs, log_attn, log_abs_gap, np.sign(gap), signed=signed)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    log_abs, sign, delta = ours
    plain = (np.exp(log_attn) * gap).sum(-1)
    np.testing.assert_allclose(delta, plain, rtol=1e-12)
    np.testing.assert_array_equal(sign, np.sign(plain))
    np.testing.assert_allclose(np.exp(log_abs), np.abs(plain), rtol=1e-12)


def test_delta_in_logs_keeps_attention_far_below_rounding():
    """Attention e^-800 off the optimal token: the plain sum rounds to 0, the log form
    keeps log delta = -800 + log(gap)."""
    log_attn = np.array([[0.0, -800.0]])
    gap = np.array([[0.0, 2.0]])
    with np.errstate(divide="ignore"):
        log_abs_gap = np.log(gap)
    log_abs, sign, delta = delta_in_logs(np, log_attn, log_abs_gap, np.sign(gap), False)
    assert (np.exp(log_attn) * gap).sum() == 0.0
    assert log_abs[0] == pytest.approx(-800.0 + math.log(2.0), rel=1e-15)
    assert sign[0] == 1.0 and delta[0] == 0.0  # e^-800 itself is not a float64
