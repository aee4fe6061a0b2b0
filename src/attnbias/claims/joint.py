"""Joint training of W and u (Sec. 4, Eq. 10): Thm. 2 (the loss falls fast, ahead of GD),
Thm. 3 (W's direction at the 1/log t rate), Thm. 4 (u's direction and margin) and Lem. 11
(loss ratio bounded, score gap and optimal softmax growing)."""

from __future__ import annotations

import numpy as np

from attnbias.claims.coverage import EQ10, JOINT_NEEDS, LEMMA11_NEEDS
from attnbias.claims.measure import (
    MONOTONE_TOLERANCE,
    R2_MIN,
    curve_ratio,
    fit_per_seed,
    fitted_bound,
    has,
    largest_decrease,
    series,
    window,
)
from attnbias.claims.rows import Rows, ahead_of_gd_row, no_decrease_row

U_MARGIN_MIN = 0.99  # Thm. 4's factor was lost; GD reaches 0.92 on fig3 at 10^4 (measured)
THM2_EXPONENT = 0.4  # -ln L ~ t^k: Eq. 10's u-step (t+1)^-1/2 gives k = 1/2; ours, less 0.1
JOINT = dict(needs=JOINT_NEEDS, covers=EQ10)  # what every row of Sec. 4's results assumes


def u_margin_ratio(X, y, opt, u, u_mm) -> float:
    """min_i y_i u^T x_opt,i / ||u||, over u_mm's normalised margin (1 / ||u_mm||)."""
    x_opt = X[np.arange(len(y)), opt]
    margin = np.min(y * (x_opt @ u)) / np.linalg.norm(u)
    return float(margin * np.linalg.norm(u_mm))


def u_rows(rows: Rows, table, opt, u_margins: dict | None, t_last) -> None:
    """Thm. 4: u's direction converges to u_mm's, and u attains a factor of its margin."""
    misalignment_u = series(table, opt, "gap_u")
    rows.add(
        "Thm. 4: u's direction",
        f"{opt} u direction",
        "u converges in direction to u_mm.",
        rows.source("Thm. 4 (u-SVM)"),
        "1 - cos(u_t, u_mm)",
        f"t = {t_last}",
        misalignment_u.iloc[-1].to_numpy(),
        "< 1e-3 (our threshold; Thm. 4's rate constant was lost)",
        np.all(misalignment_u.iloc[-1] < 1e-3),
        opt=opt,
        **JOINT,
    )
    if not u_margins or opt not in u_margins:
        return
    ratio = np.asarray(u_margins[opt])
    rows.add(
        "Thm. 4: u's margin",
        f"{opt} u margin",
        "the learned u attains a constant factor of u_mm's margin.",
        "Thm. 4",
        "min_i y_i u^T x_opt,i / ||u||, over u_mm's margin 1/||u_mm||",
        f"t = {t_last}",
        ratio,
        f"the factor was lost in extraction; holds if >= {U_MARGIN_MIN:g} on every "
        "seed (ours: GD, which Thm. 4 does not cover, stays below it at 10^4 on fig3)",
        np.all(ratio >= U_MARGIN_MIN),
        opt=opt,
        **JOINT,
    )


def loss_rows(rows: Rows, table, opt, optimizers, t_last) -> None:
    """Thm. 2 as a rate (-ln L ~ t^k) and as "faster than GD" over the whole run."""
    late = window(series(table, opt, "log_loss"), t_last / 10, t_last)
    exponents, r2 = fit_per_seed(late, np.log, lambda v: np.log(-v))
    holds, undecided = fitted_bound(exponents, r2, np.all(exponents >= THM2_EXPONENT))
    rows.add(
        "Thm. 2: loss rate",
        f"{opt} loss rate",
        "the train loss falls fast: -ln L grows like a power t^k of t.",
        "Thm. 2 (rate lost in extraction; 'analogous to linear predictors on separable data', "
        "slower as the steps shrink)",
        f"exponent k of -ln L ~ t^k (slope of ln(-ln L) against ln t; ln L at {t_last}: "
        f"{late.iloc[-1].max():.4g} at most)",
        f"t in [{t_last // 10}, {t_last}]",
        exponents,
        f"holds if k >= {THM2_EXPONENT:g} on every seed (ours: Eq. 10's u-steps (t+1)^-1/2 give "
        f"||u_t|| ~ sqrt t, k = 1/2; GD's -ln L grows like ln t, k near 0), R^2 >= {R2_MIN:g} "
        "(else undecided)",
        holds,
        r2=r2,
        opt=opt,
        undecided=undecided,
        **JOINT,
    )
    if opt == "gd" or "gd" not in optimizers:
        return
    ahead_of_gd_row(
        rows, table, opt, "log_loss", t_last, "Thm. 2: loss rate", f"{opt} loss ahead of gd",
        "the train loss is below GD's at every logged t after the burn-in.",
        rows.source("Thm. 2 against GD", " ({})"),
        lambda mine, gd: (
            f"last logged t at which ln L is not below GD's (0: never); at t = {t_last}: ln L "
            f"{mine.iloc[-1].max():.4g} at most, GD {gd.iloc[-1].min():.4g} at least"
        ),
        **JOINT,
    )  # fmt: skip


def w_rate_row(rows: Rows, table, opt, t_last) -> None:
    """Thm. 3: W's direction converges to W_mm's at least at the 1/log t rate."""
    misalignment_W = window(series(table, opt, "gap_W"), t_last / 10, t_last)
    ln_ln = lambda t: np.log(np.log(t))  # noqa: E731
    slopes, r2 = fit_per_seed(misalignment_W, ln_ln, np.log)
    ratio = curve_ratio(misalignment_W, ln_ln, np.log, -1.0)
    holds, undecided = fitted_bound(slopes, r2, np.all(slopes <= -1) and np.all(ratio <= 1))
    rows.add(
        "Thm. 3",
        f"{opt} W rate bound",
        "W converges in direction to W_mm at least at the 1/log t rate.",
        "Thm. 3 (Eq. 10 with its step factors)",
        "slope of ln(1 - cos(W_t, W_mm)) against ln ln t; window ratio: the largest "
        "1 - cos over 1/log t from the window's first value",
        f"t in [{t_last // 10}, {t_last}]",
        slopes,
        "a bound: holds if every slope <= -1 (1/log t) and the window ratio <= 1 "
        f"(R^2 >= {R2_MIN:g}, else undecided); a gap that stalls fails it",
        holds,
        r2=r2,
        predicted=-1.0,
        opt=opt,
        undecided=undecided,
        window_ratio=float(ratio.max()),
        **JOINT,
    )


def lemma11_rows(rows: Rows, table, opt, t_last) -> None:
    """Lem. 11 (iii) the loss ratio stays bounded, (i) the score gap and (ii) the optimal
    softmax grow; only where the run logged the loss ratio."""
    if not has(table, opt, "log_loss_ratio"):
        return
    ratio = series(table, opt, "log_loss_ratio")
    early, late = window(ratio, 0, t_last / 10).max(), window(ratio, t_last / 10, t_last).max()
    growth = (late - early).to_numpy()
    rows.add(
        "Lem. 11",
        f"{opt} loss ratio",
        "the loss ratio across samples stays bounded by a constant.",
        "Lem. 11 (iii), Sec. 4.3",
        f"growth of max_t ln(max_i l_i / min_i l_i) from [0, {t_last // 10}] to "
        f"[{t_last // 10}, {t_last}] (late max {late.max():.3g})",
        f"t in [0, {t_last}]",
        growth,
        "the constant was lost; holds if the late maximum exceeds the early one by at most "
        "1 (a factor e) on every seed (ours)",
        np.all(growth <= 1),
        needs=LEMMA11_NEEDS,
        opt=opt,
        covers=EQ10,
    )
    score_gap = window(series(table, opt, "min_score_gap"), 1, t_last)
    drops = largest_decrease(score_gap)
    rows.add(
        "Lem. 11",
        f"{opt} score gap",
        "the score gap between optimal and non-optimal tokens grows.",
        "Lem. 11 (i), Sec. 4.3",
        "largest relative decrease of min_i (gamma_opt - max non-opt gamma) between logged "
        f"iterations (final gap {score_gap.iloc[-1].min():.3g} at least)",
        f"t in [1, {t_last}]",
        drops,
        f"holds if <= {MONOTONE_TOLERANCE:g} on every seed and the gap ends positive",
        np.all(drops <= MONOTONE_TOLERANCE) and np.all(score_gap.iloc[-1] > 0),
        opt=opt,
        **JOINT,
    )
    no_decrease_row(
        rows,
        series(table, opt, "min_opt_softmax"),
        "min opt softmax",
        f"t in [0, {t_last}]",
        "Lem. 11",
        f"{opt} softmax monotone",
        "the optimal tokens' softmax does not decrease.",
        "Lem. 11 (ii), Sec. 4.3",
        opt=opt,
        **JOINT,
    )
