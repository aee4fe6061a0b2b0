"""The stable gradients' pieces, written once for numpy and torch arrays (model.gradients
forms them in torch in the coordinates A of W = W0 + A Q; training.full_matrix in numpy on
the full W). See model.gradients for the formulas and why each weight is formed in logs.

A gradient block is returned as ScaledGradient: exp(log_scale) * direction, per run, with
the largest log-weight factored out, so that no step under- or overflows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class ScaledGradient:
    """A gradient block equal to exp(log_scale) * direction, per run (numpy or torch)."""

    log_scale: Any  # (B,)  -inf where the gradient is exactly zero
    direction: Any  # (B, ...) G~, entries of order one
    log_norm: Any  # (B,)  log ||gradient||, -inf where it is zero


def w_token_sums(xp, log_neg_slope, log_attn, log_abs_gap, gap_sign, X, x_bar):
    """(log_scale (B,), v (B, n, d)) with grad_W L = e^log_scale (1/n) sum_i v_i x_i1^T:
    v_i = sum_t w_it (x_it - x_bar_i), w_it = -l'(m_i) a_it (gamma_opt - gamma_t) formed in
    logs, the largest log-weight factored out."""
    log_weight = log_neg_slope[..., None] + log_attn + log_abs_gap
    log_scale = xp.amax(xp.amax(log_weight, axis=-1), axis=-1)
    weight = gap_sign * xp.exp(log_weight - xp.nan_to_num(log_scale, neginf=0.0)[:, None, None])
    # two products: w is 0 at opt and x_bar ~ x_opt, so both terms are of the size of v
    # itself and nothing cancels catastrophically
    v = (weight[..., None, :] @ X)[..., 0, :] - xp.sum(weight, axis=-1, keepdims=True) * x_bar
    return log_scale, v


def u_direction(xp, log_neg_slope, y, x_bar):
    """(log_scale (B,), direction (B, d)) with grad_u L = e^log_scale direction."""
    log_scale = xp.amax(log_neg_slope, axis=1)
    weight = xp.exp(log_neg_slope - xp.nan_to_num(log_scale, neginf=0.0)[:, None]) * y
    return log_scale, -xp.sum(weight[..., None] * x_bar, axis=1) / y.shape[1]
