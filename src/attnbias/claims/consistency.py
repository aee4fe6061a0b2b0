"""Consistency checks of NGD (near-tautologies, outside the count): ||W_t|| grows like
lr t (the proof of Thm. 1), and Lem. 1's softmax exponent -lr/||W_mm|| once it does."""

from __future__ import annotations

import numpy as np

from attnbias.claims.measure import CLOSENESS_TOLERANCE, fit_per_seed, series, window
from attnbias.claims.rows import Measured, Rows, Said, Verdict, spread


def norm_growth_rows(rows: Rows) -> None:
    """||W_t|| <= lr t always; it grows at lr per step once the direction settles."""
    table, t_last = rows.run.table, rows.run.t_last
    for opt in rows.runs("ngd"):
        lr = rows.specs[opt].lr
        norm = window(series(table, opt, "W_norm"), t_last / 10, t_last)
        slopes, r2 = fit_per_seed(norm, lambda t: t, lambda v: v)
        rows.add(
            Said("ngd norm slope", "||W_t|| grows linearly in t."),
            Measured(
                "slope of ||W_t|| against t",
                f"t in [{t_last // 10}, {t_last}]",
                slopes,
                opt=opt,
                value_text=f"slope {spread(slopes, '.4g')} per step against lr = {lr:g}",
                r2=r2,
                predicted=lr,
            ),
            Verdict(
                f"lr = {lr:g} per step (each step adds at most lr, so ||W_t|| <= lr t always); "
                "consistent if within 5% and R^2 > 0.999",
                np.all(np.abs(slopes / lr - 1) < 0.05) and np.all(r2 > 0.999),
            ),
        )


def softmax_rate_rows(rows: Rows) -> None:
    """Lem. 1's exponent -lr/||W_mm||, which follows once ||W_t|| = lr t."""
    table, t_last = rows.run.table, rows.run.t_last
    exponents = -(np.asarray(rows.run.W_mm_norms, dtype=float) ** -1)
    for opt in rows.runs("ngd"):
        lr = rows.specs[opt].lr
        log1m = window(series(table, opt, "log1m_opt_softmax"), t_last / 2, t_last)
        slopes, r2 = fit_per_seed(log1m, lambda t: t, lambda v: v)
        predicted = lr * exponents
        rows.add(
            Said(
                "ngd softmax rate",
                "The optimal token's softmax approaches 1 exponentially fast, at the rate of "
                "Lem. 1 ('closely aligns with the empirical rate').",
            ),
            Measured(
                "slope of ln(1 - mean opt softmax) against t",
                f"t in [{t_last // 2}, {t_last}]",
                slopes,
                opt=opt,
                value_text=f"slope {spread(slopes, '.4g')} per step against "
                f"{spread(predicted, '.4g')}",
                r2=r2,
                predicted=float(np.mean(predicted)),
            ),
            Verdict(
                f"-lr/||W_mm|| = {float(np.mean(predicted)):.4g} (mean over seeds): OUR derivation "
                "of Lem. 1's exponent, which follows once ||W_t|| = lr t and W_t's direction is "
                f"W_mm's; consistent if every seed is within {CLOSENESS_TOLERANCE:.0%}",
                np.all(np.abs(slopes / predicted - 1) < CLOSENESS_TOLERANCE),
            ),
        )
