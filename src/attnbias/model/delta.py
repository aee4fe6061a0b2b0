"""The attention's delta in logs, written once for numpy and torch arrays.

delta_i = sum_t a_{i,t} (gamma_opt_i - gamma_{i,t}) is formed from log a_t and log|gap_t|:
gamma_opt - sum_t a_t gamma_t rounds to exactly gamma_opt once the attention off the
optimal token is below ~1e-16 (attention's module doc, "Why logs" in docs/model.md). The
torch reference (attention.forward) and the compiled kernel's metrics
(token_problem.TokenProblem.forward) both take it from here.
"""

from __future__ import annotations

from attnbias.model.arrays import logsumexp, signed_logsumexp


def delta_in_logs(xp, log_attn, log_abs_gap, gap_sign, signed: bool):
    """(log|delta|, sign(delta), delta) over the last axis, from the attention in logs and
    the gaps gamma_opt - gamma_t as log|gap| and sign (array module `xp`). `signed`: some gap
    may be negative (the optimal token does not score best everywhere); otherwise every
    term is positive and the sum needs no signs."""
    terms = log_attn + log_abs_gap
    if signed:
        log_abs_delta, sign = signed_logsumexp(xp, terms, gap_sign)
        return log_abs_delta, sign, sign * xp.exp(log_abs_delta)
    log_abs_delta = logsumexp(xp, terms)
    # delta is 0 only where every term is (-inf), which its sign says
    finite = xp.isfinite(log_abs_delta)
    sign = xp.where(finite, xp.ones_like(log_abs_delta), xp.zeros_like(log_abs_delta))
    return log_abs_delta, sign, xp.exp(log_abs_delta)
