"""The logged metrics' formulas, written once for numpy and torch arrays.

Both training backends log the same metrics; each computes the forward quantities its own
way and hands them here with its array module xp: the compiled kernel in numpy from token
coordinates (token_problem.TokenProblem.forward, torch-free), the torch loop from its
forward pass on the device (attention.forward, so nothing is copied off a GPU). The
inputs, per run (B) and sequence (n):

  log_attn (B, n, T)   log softmax(X W x_1), the attention
  opt (B, n)           the optimal token of each sequence (integer)
  gamma_opt (B, n)     its score, and gap (B, n, T) = gamma_opt - gamma_t
  delta (B, n)         sum_t a_t gap_t, with log_abs_delta = log|delta| and delta_sign
  margin (B, n)        gamma_opt - delta
  W (B, d, d), u (B, d), W_mm, u_mm: the parameters and the max-margin directions

Where numpy and torch differ (logsumexp, take-along): model.arrays, which says why not
array-api-compat. The losses' log forms (model.losses) are likewise written once.
"""

from __future__ import annotations

import math

from attnbias.model.arrays import log_mean, logsumexp, signed_logsumexp, take_along
from attnbias.training.metrics import PER_SAMPLE_LIMIT, per_sample_metric


def cosine_and_gap(xp, P, P_ref):
    """Alignment <P, P_ref>/(|P||P_ref|) per run, and 1 - alignment computed as
    ||P/|P| - R/|R|||^2 / 2 (exact where the alignment rounds to 1). NaN where P = 0."""
    axes = tuple(range(1, P.ndim))
    unit = P / xp.sqrt(xp.sum(P * P, axis=axes, keepdims=True))
    unit_ref = P_ref / xp.sqrt(xp.sum(P_ref * P_ref, axis=axes, keepdims=True))
    alignment = xp.sum(unit * unit_ref, axis=axes)
    return alignment, 0.5 * xp.sum((unit - unit_ref) ** 2, axis=axes)


def is_opt(xp, opt, T: int):
    """(B, n, T): whether token t is the optimal token of its sequence."""
    return xp.arange(T, device=opt.device) == opt[..., None]


def log1m_opt_softmax(xp, log_attn, opt):
    """log(1 - a_opt) per sequence, (B, n), by logsumexp over the other tokens."""
    return logsumexp(xp, xp.where(is_opt(xp, opt, log_attn.shape[-1]), -math.inf, log_attn))


def log_excess_over_opt(xp, loss, gamma_opt, delta, log_abs_delta, delta_sign):
    """log|L - L*| and the sign of L - L*, per run, with L* the loss with all attention on
    the optimal tokens; summed in logs, signed (where opt is not the best-scoring token, its
    sample's share is negative)."""
    log_abs, sign = loss.log_excess(gamma_opt, delta, log_abs_delta, delta_sign)
    log_abs_sum, sign = signed_logsumexp(xp, log_abs, sign)
    return log_abs_sum - math.log(delta.shape[-1]), sign


def log_excess_loss(xp, loss, f_star, log_loss, gamma_opt, delta, log_abs_delta, delta_sign):
    """log|L - f*| and the sign of L - f*, per run: what the Polyak step reads. f* = "opt"
    is the loss with all attention on the optimal tokens (log_excess_over_opt)."""
    if f_star == "opt":
        return log_excess_over_opt(xp, loss, gamma_opt, delta, log_abs_delta, delta_sign)
    if f_star == 0:
        return log_loss, xp.ones_like(log_loss)
    excess = xp.exp(log_loss) - f_star
    return xp.log(xp.abs(excess)), xp.sign(excess)


def row(
    xp, loss, W, u, W_mm, u_mm, train_u: bool, only: str | None = None, *,
    log_attn, opt, gamma_opt, gap, delta, log_abs_delta, delta_sign, margin,
) -> dict:  # fmt: skip
    """The metrics of each run at one logged iteration, {name: (B,)}, in the order of
    metrics.logged_metrics (see the module doc for the inputs). only="study": log_loss,
    opt_softmax and gap_W alone, what the global-convergence study reads."""
    n, T = log_attn.shape[-2:]
    log_loss = log_mean(xp, loss.log_value(margin))
    opt_softmax = take_along(xp, xp.exp(log_attn), opt[..., None])[..., 0]
    if only == "study":
        gap_W = cosine_and_gap(xp, W, W_mm)[1]
        return {"log_loss": log_loss, "opt_softmax": xp.mean(opt_softmax, axis=-1), "gap_W": gap_W}
    out = {
        "log_loss": log_loss,
        "loss": xp.exp(log_loss),
        "W_norm": xp.sqrt(xp.sum(W * W, axis=(1, 2))),
        "u_norm": xp.sqrt(xp.sum(u * u, axis=1)),
        "opt_softmax": xp.mean(opt_softmax, axis=-1),
        "log1m_opt_softmax": log_mean(xp, log1m_opt_softmax(xp, log_attn, opt)),
    }
    out["min_opt_softmax"] = xp.amin(opt_softmax, axis=-1)  # Lem. 3 and Lem. 11: non-decreasing
    if n <= PER_SAMPLE_LIMIT:
        for i in range(n):
            out[per_sample_metric(i)] = opt_softmax[:, i]
    out["alignment_W"], out["gap_W"] = cosine_and_gap(xp, W, W_mm)
    if train_u:
        out["alignment_u"], out["gap_u"] = cosine_and_gap(xp, u, u_mm)
        # Lem. 11: the loss ratio across samples stays bounded, the opt score gap grows
        log_losses = loss.log_value(margin)
        out["log_loss_ratio"] = xp.amax(log_losses, axis=-1) - xp.amin(log_losses, axis=-1)
        non_opt = xp.where(is_opt(xp, opt, T), math.inf, gap)
        out["min_score_gap"] = xp.amin(xp.amin(non_opt, axis=-1), axis=-1)
    else:
        log_abs, sign = log_excess_over_opt(xp, loss, gamma_opt, delta, log_abs_delta, delta_sign)
        # the log of a negative excess is undefined: NaN, and the row is not written
        out["log_excess_loss"] = xp.where(sign >= 0, log_abs, math.nan)
    return out
