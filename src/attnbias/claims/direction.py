"""W's direction and norm under a fixed decoder (Sec. 3): Thm. 1 (NGD) and Thm. 7 (PS), the
rate of alignment with W_mm and how closely Thm. 1 predicts it; Lem. 3, the optimal token's
softmax never decreases; Sec. 3.3's two-token example (Eq. 3), GD's alignment gap decaying
like 1/log^2 t and NGD's like t^-2, and GD's norm growing like log t (elsewhere a
comparison)."""

from __future__ import annotations

import math

import numpy as np

from attnbias.claims.coverage import SEC3_NGD, SEC3_PS
from attnbias.claims.measure import (
    CLOSENESS_TOLERANCE,
    R2_MIN,
    curve_ratio,
    fit_per_seed,
    fitted_bound,
    has,
    series,
    window,
)
from attnbias.claims.rows import Rows, no_decrease_row

# The rate of Thm. 1 as we read it (the exponent survived only in our reading of the text).
THM1_SLOPE = -0.75
SLOPE_QUANTITY = "slope of ln(1 - cos(W_t, W_mm)) against ln t"


def rate_rows(rows: Rows, table, opt, result, t_last) -> None:
    """Thm. 1 (NGD) or Thm. 7 (PS): the bound on the alignment rate, and how close."""
    misalignment = window(series(table, opt, "gap_W"), t_last / 10, t_last)
    misalignment = misalignment[(misalignment > 0).all(axis=1)]
    slopes, r2 = fit_per_seed(misalignment, np.log, np.log)
    ratio = curve_ratio(misalignment, np.log, np.log, THM1_SLOPE)
    note = (
        "Thm. 1's rate t^-3/4 (our reading of the extracted text)"
        if result == "Thm. 1"
        else "Thm. 7's rate was lost in extraction; as Thm. 1's analogue we test Thm. 1's "
        "t^-3/4 form"
    )
    window_text = f"t in [{t_last // 10}, {t_last}]"
    fitted = dict(r2=r2, predicted=THM1_SLOPE, opt=opt)
    fitted["covers"] = SEC3_NGD if result == "Thm. 1" else SEC3_PS
    holds, undecided = fitted_bound(slopes, r2, np.all(slopes <= THM1_SLOPE) and np.all(ratio <= 1))
    rows.add(
        result,
        f"{opt} rate bound",
        f"the direction converges to W_mm at least at the rate of {result}.",
        f"{result}, Sec. 3.2",
        f"{SLOPE_QUANTITY}; window ratio: the largest 1 - cos over t^-3/4 from the window's "
        "first value",
        window_text,
        slopes,
        f"{note}; a bound: holds if every slope <= {THM1_SLOPE:g} and the window ratio <= 1 "
        f"(R^2 >= {R2_MIN:g}, else undecided)",
        holds,
        undecided=undecided,
        window_ratio=float(ratio.max()),
        **fitted,
    )
    if result != "Thm. 1":
        return
    close = np.all(np.abs(slopes / THM1_SLOPE - 1) <= CLOSENESS_TOLERANCE)
    holds, undecided = fitted_bound(slopes, r2, close)
    rows.add(
        result,
        f"{opt} rate closeness",
        "the alignment is 'closely predicted by Thm. 1'.",
        rows.source("Sec. 3.2 (below Lem. 1)"),
        SLOPE_QUANTITY,
        window_text,
        slopes,
        f"{note}; holds if measured/predicted is within 1 +- {CLOSENESS_TOLERANCE:g} on "
        f"every seed (R^2 >= {R2_MIN:g}, else undecided)",
        holds,
        undecided=undecided,
        **fitted,
    )


def softmax_monotone_row(rows: Rows, table, opt, t_last) -> None:
    """Lem. 3 (NGD; for PS in Thm. 7's proof): the optimal token's softmax never decreases."""
    metric = "min_opt_softmax" if has(table, opt, "min_opt_softmax") else "opt_softmax"
    no_decrease_row(
        rows,
        series(table, opt, metric),
        metric.replace("_", " "),
        f"t in [0, {t_last}]",
        "Lem. 3",
        f"{opt} softmax monotone",
        "the optimal token's softmax does not decrease.",
        "Lem. 3 (NGD); App. A, proof of Thm. 7 (PS)",
        opt=opt,
        covers=SEC3_NGD + SEC3_PS,
    )


def two_token_rate_rows(rows: Rows, table, optimizers, t_last) -> None:
    """GD's and NGD's alignment rates in the two-token example (our derivation of each)."""
    for opt, x_of_t, x_text, predicted, tol, law in (
        ("gd", lambda t: np.log(np.log(t)), "ln ln t", -2.0, 0.1, "||W0_perp||^2 / (2 log^2 t)"),
        ("ngd", np.log, "ln t", -2.0, 0.05, "||W0_perp||^2 / (2 lr^2 t^2)"),
    ):
        if opt not in optimizers:
            continue
        misalignment = window(series(table, opt, "gap_W"), t_last / 100, t_last)
        slopes, r2 = fit_per_seed(misalignment, x_of_t, np.log)
        ratio = curve_ratio(misalignment, x_of_t, np.log, predicted)
        holds, undecided = fitted_bound(slopes, r2, np.all(np.abs(slopes / predicted - 1) <= tol))
        rows.add(
            "Sec. 3.3: GD against NGD",
            f"two token {opt} rate",
            f"the alignment gap decays like {law}.",
            "Sec. 3.3, Eq. 3",
            f"slope of ln(1 - cos(W_t, W_mm)) against {x_text}; window ratio: the largest "
            "measured over predicted from the window's first value",
            f"t in [{t_last // 100}, {t_last}]",
            slopes,
            f"{predicted:g} (gap ~ {law}; our derivation from Sec. 3.3's example); holds if "
            f"measured/predicted is within 1 +- {tol:g} on every seed (R^2 >= {R2_MIN:g}, "
            "else undecided)",
            holds,
            r2=r2,
            predicted=predicted,
            opt=opt,
            covers=("gd", "ngd"),
            undecided=undecided,
            window_ratio=float(ratio.max()),
        )
    if "gd" in optimizers and has(table, "gd", "W_norm"):
        log_norm_row(rows, table, t_last, covered=True)


def log_norm_row(rows: Rows, table, t_last, *, covered: bool) -> None:
    """Sec. 3.3: under GD ||W_t|| grows like log t. Derived there for the two-token example
    only (covered), elsewhere a comparison: a + b ln t against a power law c t^k, both fitted
    to ||W_t||, by AIC (both have two parameters: AIC difference = N ln(RSS_pow / RSS_log))."""
    norm = window(series(table, "gd", "W_norm"), t_last / 100, t_last)
    ln_t = np.log(norm.index.to_numpy(dtype=float))
    delta, r2_log, r2_pow = [], [], []
    for seed in norm.columns:
        v = norm[seed].to_numpy()
        log_fit = np.polyval(np.polyfit(ln_t, v, 1), ln_t)
        pow_fit = np.exp(np.polyval(np.polyfit(ln_t, np.log(v), 1), ln_t))
        total = np.sum((v - v.mean()) ** 2)
        rss_log, rss_pow = np.sum((v - log_fit) ** 2), np.sum((v - pow_fit) ** 2)
        delta.append(len(v) * math.log(rss_pow / rss_log))
        r2_log.append(1 - rss_log / total)
        r2_pow.append(1 - rss_pow / total)
    delta = np.array(delta)
    # undecided only where neither form describes the curve
    holds, undecided = fitted_bound(None, np.maximum(r2_log, r2_pow), np.all(delta > 0))
    rows.add(
        "Sec. 3.3: GD's norm",
        "gd norm log growth",
        "||W_t|| grows like log t (a + b ln t fits better than a power law c t^k).",
        "Sec. 3.3 (the two-token example)",
        "AIC(power law) - AIC(a + b ln t), fitted to ||W_t|| (> 0 favours log growth); R^2 of "
        f"the power law {min(r2_pow):.4f} at least",
        f"t in [{t_last // 100}, {t_last}]",
        delta,
        f"holds if > 0 on every seed; undecided where neither fit reaches R^2 {R2_MIN:g}",
        holds,
        r2=r2_log,
        opt="gd",
        covers=("gd",) if covered else (),
        undecided=undecided,
        scope="" if covered else "GD outside Sec. 3.3's two-token example",
    )
