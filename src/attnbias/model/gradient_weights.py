"""The stable gradients' pieces, written once for numpy and torch arrays: one home per array
library assembles them, model.gradients in torch in the coordinates A of W = W0 + A Q and
model.full_gradients in numpy on the full W; training/_kernel.c mirrors token_coefficients
line by line in C.

A gradient block is returned as ScaledGradient: exp(log_scale) * direction, per run, with
the largest log-weight factored out, so that no step under- or overflows.

The W-gradient is a sum over tokens, grad_W L = (1/n) sum_i sum_t c_it x_it z_i^T (z_i the
query: x_i1, or the data's Z), with

  c_it = -l'(m_i) a_it D_it,   D_it = sum_s a_is (gamma_is - gamma_it) = gbar_i - gamma_it,

each c formed without a difference of large terms whichever token the attention favours.
D is referred to the token r_i the attention weights most: D_ir = sum_{s != r} a_is
(gamma_is - gamma_ir) is a sum of the small weights a_is (formed in logs: it is of the size
e^-(logit gap) and may lie far below the smallest float), and for every other token
D_it = D_ir - (gamma_it - gamma_ir), a pairwise score difference plus that small sum.
Referring the weights to the stored optimal token instead (sum_t w_t x_t - (sum_t w_t)
x_bar, the form this module had until 2026-11-28) subtracts two terms of the size of |x|
to get one of the size of e^-gap as soon as the attention sits on another token: measured
on DM's sign descent, 99 % relative error and half the entries' signs wrong
(docs/findings.md, "The exact gradient"). tests/model/test_gradients.py holds every
backend to 50-digit arithmetic there, at logit gaps from 5 to 700.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnbias.model.arrays import take_along


@dataclass
class ScaledGradient:
    """A gradient block equal to exp(log_scale) * direction, per run (numpy or torch)."""

    log_scale: Any  # (B,)  -inf where the gradient is exactly zero
    direction: Any  # (B, ...) G~, entries of order one
    log_norm: Any  # (B,)  log ||gradient||, -inf where it is zero


def _log_abs(xp, x):
    with np.errstate(divide="ignore"):
        return xp.log(xp.abs(x))


def token_coefficients(xp, log_neg_slope, log_attn, gamma):
    """(log_scale (B,), c (B, n, T)) with grad_W L = e^log_scale (1/n) sum_i sum_t c_it
    x_it z_i^T (the module doc's c, the largest log-magnitude factored out), from
    log(-l'(m)) (B, n), the attention in logs and the scores gamma = y u^T x_t (B, n, T)."""
    r = xp.argmax(log_attn, axis=-1)[..., None]  # the token the attention weights most
    diff = gamma - take_along(xp, gamma, r)  # gamma_t - gamma_r, 0 at r
    is_r = xp.arange(gamma.shape[-1], device=gamma.device) == r
    # D_r = sum_{s != r} a_s (gamma_s - gamma_r): the weights a_s / a_top, a_top the largest
    # of them, are at most one, so the sum neither under- nor overflows
    others = xp.where(is_r, -np.inf, log_attn)
    top = xp.nan_to_num(xp.amax(others, axis=-1), neginf=0.0)
    total = xp.sum(xp.exp(others - top[..., None]) * diff, axis=-1)
    log_abs_d_r = (_log_abs(xp, total) + top)[..., None]
    sign_r = xp.sign(total)[..., None]
    # D_t = D_r - (gamma_t - gamma_r); where gamma_t ties with gamma_r it is D_r, which may
    # underflow as a plain number, so it keeps its logarithm
    with_r = is_r | (diff == 0)
    d_other = sign_r * xp.exp(log_abs_d_r) - diff
    log_abs_d = xp.where(with_r, log_abs_d_r, _log_abs(xp, d_other))
    sign = xp.where(with_r, sign_r, xp.sign(d_other))
    log_c = log_neg_slope[..., None] + log_attn + log_abs_d
    log_scale = xp.amax(xp.amax(log_c, axis=-1), axis=-1)
    offset = xp.nan_to_num(log_scale, neginf=0.0)[:, None, None]
    return log_scale, sign * xp.exp(log_c - offset)


def w_token_sums(xp, log_neg_slope, log_attn, gamma, X):
    """(log_scale (B,), v (B, n, d)) with grad_W L = e^log_scale (1/n) sum_i v_i z_i^T:
    v_i = sum_t c_it x_it (token_coefficients)."""
    log_scale, c = token_coefficients(xp, log_neg_slope, log_attn, gamma)
    return log_scale, (c[..., None, :] @ X)[..., 0, :]


def u_direction(xp, log_neg_slope, y, x_bar):
    """(log_scale (B,), direction (B, d)) with grad_u L = e^log_scale direction."""
    log_scale = xp.amax(log_neg_slope, axis=1)
    weight = xp.exp(log_neg_slope - xp.nan_to_num(log_scale, neginf=0.0)[:, None]) * y
    return log_scale, -xp.sum(weight[..., None] * x_bar, axis=1) / y.shape[1]
