"""The numerically stable gradients of the empirical risk.

With a = softmax(X W z), z the query (x_1, or the data's Z: attnbias.model.queries), margin
y f = gamma_opt - delta and x_bar = sum_t a_t x_t:

  grad_W L = (1/n) sum_i -l'(m_i) sum_t a_it (gbar_i - gamma_it) x_it z_i^T
  (gbar_i = sum_s a_is gamma_is)
  grad_u L = -(1/n) sum_i -l'(m_i) y_i x_bar_i

Plain autograd forms the W-gradient as a difference of nearly equal terms and loses it
once the attention off the top token drops below ~1e-16 (the NGD direction is then
silently wrong). Here each weight -l'(m) a_t (gbar - gamma_t) is formed in logs without a
difference of large terms, whichever token the attention favours (gradient_weights), the
largest log-weight M is factored out, and the gradient is returned as e^M * G~: normalised
methods need only G~ / ||G~||, and no step under- or overflows.

Where the plain closed forms of attnbias.model.reference (grad_W, grad_u: the paper's
X^T (diag(s) - s s^T) X u x_1^T per sample, averaged with weights l'(y f) y) are finite,
e^M * G~ equals them up to rounding; tests/model/test_reference.py checks it to 1e-10 relative,
and tests/model/test_gradients.py checks the saturated regime against 200-digit arithmetic.
Measured with plain float64 autograd on Example 1 (n = 20, T = 5, d = 100, seed 0, NGD
lr 0.1): 1 - cos(W_t, W_mm) is 0.13 at t = 2000, where the stable run is at 3.3e-4
(with a query signal of 0.5, which breaks Ass. 2: 0.31 against 1.3e-3). The two agree to
1e-12 at t = 200 and already differ by 2e-5 (relative) at t = 1000, where the mean
1 - s_opt is 2e-14 (docs/model.md, "Why logs").
"""

from __future__ import annotations

import torch

from attnbias.model.attention import Forward, Problem
from attnbias.model.gradient_weights import ScaledGradient, u_direction, w_token_sums

__all__ = ["u_gradient", "w_gradient"]


def w_gradient(problem: Problem, fwd: Forward, loss) -> ScaledGradient:
    """grad_W L in the coordinates A of W = W0 + A Q (see attention.Problem)."""
    log_scale, v = w_token_sums(
        torch, loss.log_neg_slope(fwd.margin), fwd.log_attn, fwd.scores.gamma, problem.X
    )
    direction = v.transpose(1, 2) / problem.n  # (B, d, n): gradient = direction @ Q
    log_norm = 0.5 * torch.log(problem.coordinate_sq_norm(direction)) + log_scale
    return ScaledGradient(log_scale, direction, log_norm)


def u_gradient(problem: Problem, fwd: Forward, loss) -> ScaledGradient:
    """grad_u L."""
    log_scale, direction = u_direction(torch, loss.log_neg_slope(fwd.margin), problem.y, fwd.x_bar)
    log_norm = torch.log(torch.linalg.vector_norm(direction, dim=-1)) + log_scale
    return ScaledGradient(log_scale, direction, log_norm)
