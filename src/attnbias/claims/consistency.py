"""Consistency checks of NGD (near-tautologies, outside the count): ||W_t|| grows like
lr t (the proof of Thm. 1), and Lem. 1's softmax exponent -lr/||W_mm|| once it does."""

from __future__ import annotations

import numpy as np

from attnbias.claims.measure import CLOSENESS_TOLERANCE, fit_per_seed, series, window
from attnbias.claims.rows import Rows


def ngd_consistency_rows(rows: Rows, table, lr, W_mm_norms, t_last) -> None:
    """Near-tautologies of NGD, outside the count: ||W_t|| <= lr t always, and Lem. 1's
    exponent -lr/||W_mm|| follows once ||W_t|| = lr t and the direction has converged."""
    norm = window(series(table, "ngd", "W_norm"), t_last / 10, t_last)
    slopes, r2 = fit_per_seed(norm, lambda t: t, lambda v: v)
    rows.add(
        "Thm. 1: norm growth",
        "ngd norm slope",
        "||W_t|| grows linearly in t.",
        "Sec. 3.2 (norm growth in the proof of Thm. 1)",
        "slope of ||W_t|| against t",
        f"t in [{t_last // 10}, {t_last}]",
        slopes,
        f"lr = {lr:g} per step (each step adds at most lr, so ||W_t|| <= lr t always); "
        "consistent if within 5% and R^2 > 0.999",
        np.all(np.abs(slopes / lr - 1) < 0.05) and np.all(r2 > 0.999),
        r2=r2,
        predicted=lr,
        opt="ngd",
        kind="consistency",
    )
    log1m = window(series(table, "ngd", "log1m_opt_softmax"), t_last / 2, t_last)
    slopes, r2 = fit_per_seed(log1m, lambda t: t, lambda v: v)
    exponents = -lr / np.asarray(W_mm_norms)
    rows.add(
        "Lem. 1",
        "ngd softmax rate",
        "The optimal token's softmax approaches 1 exponentially fast, at the rate of Lem. 1 "
        "('closely aligns with the empirical rate').",
        "Lem. 1, Sec. 3.2",
        "slope of ln(1 - mean opt softmax) against t",
        f"t in [{t_last // 2}, {t_last}]",
        slopes,
        f"-lr/||W_mm|| = {float(np.mean(exponents)):.4g} (mean over seeds): OUR derivation of "
        "Lem. 1's exponent, which follows once ||W_t|| = lr t and W_t's direction is W_mm's; "
        f"consistent if every seed is within {CLOSENESS_TOLERANCE:.0%}",
        np.all(np.abs(slopes / exponents - 1) < CLOSENESS_TOLERANCE),
        r2=r2,
        predicted=float(np.mean(exponents)),
        opt="ngd",
        kind="consistency",
    )
