"""The stable gradients on the full W in numpy: what model.gradients is for torch (there in
the coordinates A of W = W0 + A Q), here from the forward quantities of
training.token_problem (forward_of), for training.full_matrix. Both assemble the pieces of
model.gradient_weights, written once for numpy and torch; training/_kernel.c mirrors them
in C."""

from __future__ import annotations

import numpy as np

from attnbias.model.gradient_weights import u_direction, w_token_sums


def w_gradient(X, log_neg_slope, log_attn, gamma) -> tuple[np.ndarray, np.ndarray]:
    """(log_scale (B,), left (B, d, n)) with grad_W L = e^log_scale left @ Q, Q the queries
    z_i (x_i1, or the data's Z), from X (B, n, T, d), log(-l'(m)) (B, n), the attention in
    logs and the scores."""
    log_scale, v = w_token_sums(np, log_neg_slope, log_attn, gamma, X)
    return log_scale, np.swapaxes(v, 1, 2) / X.shape[1]


def u_gradient(X, y, log_neg_slope, log_attn) -> tuple[np.ndarray, np.ndarray]:
    """(log_scale (B,), direction (B, d)) with grad_u L = e^log_scale direction."""
    x_bar = (np.exp(log_attn)[..., None, :] @ X)[..., 0, :]
    return u_direction(np, log_neg_slope, y, x_bar)


def log_norm(log_scale, direction) -> np.ndarray:
    """log ||e^log_scale direction|| per run (-inf where the direction is zero)."""
    flat = direction.reshape(len(direction), 1, -1)
    with np.errstate(divide="ignore"):
        return 0.5 * np.log((flat @ np.swapaxes(flat, 1, 2))[:, 0, 0]) + log_scale
