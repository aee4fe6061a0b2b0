"""Reading the aggregate tables: a metric per seed, windows, fits, first crossings, races,
bounds with a lost constant.

Everything a row measures goes through these, and the sweeps judge with the same functions
(studies.sweep_claims, sweep_metrics); the thresholds and tolerances that decide a verdict
are here, with the reason for each. numpy, pandas and the figures' plain-Python panels
only: the workflow's config checks import it while they parse.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnbias.figures.panels import REFERENCE_ANCHOR

CLOSENESS_TOLERANCE = 0.25  # |measured / predicted - 1| for "closely predicted" rows
MONOTONE_TOLERANCE = 1e-12  # relative: a decrease below this is rounding
R2_MIN = 0.9  # a fitted slope with a smaller R^2 (on some seed) decides nothing: "undecided"
BURN_IN = 100  # comparisons over the whole run start at t_last / BURN_IN
# A bound whose constant was lost, read through a trend slower than its rate, says where the
# trend crosses the line the figures draw for that rate, from the curve at
# t = REFERENCE_ANCHOR * t_last (lost_constant_bound), so that table and figure agree


def series(table: pd.DataFrame, optimizer: str, metric: str) -> pd.DataFrame:
    """One metric of one optimizer as an (iteration x seed) frame."""
    rows = table[(table["optimizer"] == optimizer) & (table["metric"] == metric)]
    if rows.empty:  # e.g. every value was undefined (NaN rows are not written)
        experiments = sorted(set(table["experiment"])) if "experiment" in table else []
        raise ValueError(
            f"experiment {', '.join(experiments) or '?'}: the aggregate table holds no "
            f"{metric} rows of optimizer {optimizer}, which the claims need"
        )
    return rows.pivot(index="iteration", columns="seed", values="value").sort_index()


def has(table: pd.DataFrame, optimizer: str, metric: str) -> bool:
    return bool(((table["optimizer"] == optimizer) & (table["metric"] == metric)).any())


def window(values: pd.DataFrame, lo: float, hi: float) -> pd.DataFrame:
    return values[(values.index >= lo) & (values.index <= hi)]


def after_burn_in(table: pd.DataFrame, optimizer: str, metric: str, t_last: int) -> pd.DataFrame:
    """The metric over [t_last / BURN_IN, t_last]: the window of whole-run comparisons."""
    return window(series(table, optimizer, metric), t_last / BURN_IN, t_last)


def fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y against x, and R^2."""
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    total = np.sum((y - y.mean()) ** 2)
    return float(slope), float(1 - residual @ residual / total) if total > 0 else math.nan


def fit_per_seed(values: pd.DataFrame, x_of_t, y_of_value) -> tuple[np.ndarray, np.ndarray]:
    """Slopes and R^2 of y_of_value(values) against x_of_t(t), one per seed."""
    if values.empty or len(values) < 3:
        raise ValueError("too few logged iterations in the fit window")
    x = x_of_t(values.index.to_numpy(dtype=float))
    fits = [fit(x, y_of_value(values[seed].to_numpy())) for seed in values.columns]
    return np.array([f[0] for f in fits]), np.array([f[1] for f in fits])


def first_passage(values: pd.DataFrame, threshold: float) -> np.ndarray:
    """First logged iteration at which each seed's value is below `threshold` (inf: never)."""
    below = values < threshold
    return np.array(
        [below.index[below[s]].min() if below[s].any() else math.inf for s in values.columns]
    )


def first_crossing(table: pd.DataFrame, optimizer: str, threshold: float, seeds) -> np.ndarray:
    """The exact first iteration with 1 - cos(W_t, W_mm) < threshold, per seed (inf: never).

    The training loop checks every step (metric first_gap_W_below_{threshold:g}); where that
    metric is absent (older tables) the log grid is used.
    """
    metric = f"first_gap_W_below_{threshold:g}"
    if not any(str(m).startswith("first_gap_W_below_") for m in table["metric"].unique()):
        return first_passage(series(table, optimizer, "gap_W"), threshold)
    if not has(table, optimizer, metric):  # no seed crossed (NaN rows are not written)
        return np.full(len(seeds), math.inf)
    last = series(table, optimizer, metric).iloc[-1]
    return np.array([last.get(s, math.inf) for s in seeds], dtype=float)


def largest_decrease(values: pd.DataFrame) -> np.ndarray:
    """Per seed, the largest drop between consecutive logged values, relative to the scale."""
    v = values.to_numpy()
    drops = -np.diff(v, axis=0) / np.maximum(np.abs(v[:-1]), 1e-300)
    return np.max(np.maximum(drops, 0.0), axis=0)


def describe_passage(first: np.ndarray, t_last: int) -> str:
    """The first crossings over the seeds as "mean (min to max)" (one value where all
    agree), with the seeds that never crossed; PASSAGE_UNIT says what the numbers are."""
    if np.all(np.isinf(first)):
        return f"not reached by t = {t_last}"
    reached = first[np.isfinite(first)]
    missing = int(np.sum(np.isinf(first)))
    text = (
        f"{reached[0]:g}"
        if reached.min() == reached.max()
        else f"{reached.mean():.4g} ({reached.min():g} to {reached.max():g})"
    )
    seeds = f"{missing} seed{'s' * (missing > 1)}"
    return text + (f" ({seeds} not by t = {t_last})" if missing else "")


# what a race's describe_passage numbers are, opening its value
PASSAGE_UNIT = "first t, mean (min to max) over seeds:"


def race(first: np.ndarray, rival: np.ndarray) -> tuple[bool, bool]:
    """(holds, undecided) of "crosses before the rival", seed by seed (inf: never crossed).

    Holds if every seed crosses strictly first; does not hold if the rival crosses first on
    some seed; otherwise (some seed where neither gets there, or a tie) undecided."""
    won, lost = first < rival, rival < first
    if won.all():
        return True, False
    return False, not lost.any()


def below_throughout(mine: pd.DataFrame, rival: pd.DataFrame) -> np.ndarray:
    """Per seed (column), whether `mine` is below `rival` at every logged t both hold."""
    mine, rival = mine.align(rival, join="inner")
    return (mine < rival).all().to_numpy()


def ahead(mine: pd.DataFrame, rival: pd.DataFrame) -> tuple[np.ndarray, bool, bool]:
    """Per seed, the last logged t at which `mine` is not below `rival` (0: never); and
    (holds, undecided) of "below at every logged t": does not hold if `mine` ends at or
    above the rival on some seed, undecided if it ends below but was not below throughout."""
    mine, rival = mine.align(rival, join="inner")
    behind = ~(mine < rival)
    last = np.array([behind.index[behind[s]].max() if behind[s].any() else 0 for s in mine])
    if not behind.to_numpy().any():
        return last, True, False
    return last, False, not behind.iloc[-1].any()


def fitted_bound(slopes, r2, within: bool) -> tuple[bool, bool]:
    """(holds, undecided) of a bound read through fitted slopes: undecided below R2_MIN."""
    if np.min(r2) < R2_MIN:
        return False, True
    return bool(within), False


def curve_ratio(values: pd.DataFrame, x_of_t, y_of_value, slope: float) -> np.ndarray:
    """Per seed, the largest measured / predicted over the window, where the prediction is
    the rate `slope` (of y = log value against x) from the window's first logged value."""
    x = x_of_t(values.index.to_numpy(dtype=float))
    out = []
    for seed in values.columns:
        y = y_of_value(values[seed].to_numpy())
        out.append(np.max(y - (y[0] + slope * (x - x[0]))))
    return np.exp(np.array(out))


def lost_constant_bound(curve: pd.DataFrame, lo: float, hi: float, x_of_t, rate: float,
                        log10_t_of_x, x_name: str):  # fmt: skip
    """(slopes, r2, holds, undecided, detail) of a bound C f(t) whose constant C was lost,
    read through the slopes of ln(quantity) against x = x_of_t(t) (ln f-scale of t) over the
    window t in [lo, hi] of `curve` (iteration x seed).

    Consistent while every seed decays at least at the bound's rate (slope <= rate); a
    slower decay over the window is undecided, never a failure: with C unknown, a slower
    curve crosses the bound only at some later t. The detail gives the slope, the window's
    span in x and where the slowest seed's trend crosses the bound's line as the figures
    draw it, from the seed's curve at t = REFERENCE_ANCHOR * hi (log10_t_of_x: x -> log10 t).
    """
    values = window(curve, lo, hi)
    slopes, r2 = fit_per_seed(values, x_of_t, np.log)
    if np.min(r2) < R2_MIN:
        return slopes, r2, False, True, f"poor fit (R^2 {np.min(r2):.3f} < {R2_MIN:g})"
    x = x_of_t(values.index.to_numpy(dtype=float))
    span = float(x[-1] - x[0])
    if np.all(slopes <= rate):
        detail = f"slopes {_range(slopes)} <= {rate:g} over a span of {span:.2g} in {x_name}"
        return slopes, r2, True, False, detail
    # the slowest seed: its trend over the window, and the line from its curve at the anchor
    seed = curve.columns[int(np.argmax(slopes))]
    y = np.log(values[seed].to_numpy())
    trend_at_zero = float(np.mean(y) - slopes.max() * np.mean(x))
    t0 = curve.index[int(np.argmin(np.abs(curve.index - max(REFERENCE_ANCHOR * hi, 2))))]
    x0, y0 = float(x_of_t(float(t0))), float(np.log(curve.loc[t0, seed]))
    crossing = (y0 - rate * x0 - trend_at_zero) / (slopes.max() - rate)
    when = (
        f"has been above it since t = 10^{log10_t_of_x(crossing):.3g}"
        if crossing <= x[-1]
        else f"would cross it near t = 10^{log10_t_of_x(crossing):.3g}"
    )
    return (
        slopes,
        r2,
        False,
        True,
        (
            f"slower than the bound's rate: slopes {_range(slopes)} against {rate:g} over a span "
            f"of only {span:.2g} in {x_name}; against a line of the bound's rate drawn from "
            f"its curve at t = {t0:g}, as in the figures, the slowest seed's trend {when}"
        ),
    )


def _range(values: np.ndarray) -> str:
    low, high = f"{values.min():.3g}", f"{values.max():.3g}"
    return low if low == high else f"{low} to {high}"


def late_max_growth(t: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row (seed) of `values` (seeds x logged t), the largest value over t in
    [t_last / 10, t_last] minus the largest over [0, t_last / 10]: Lem. 11 (iii)'s growth of
    the loss ratio (bounded: near 0 or below). The claims table and the sweeps use it."""
    t = np.asarray(t, dtype=float)
    early, late = t <= t[-1] / 10, t >= t[-1] / 10
    return values[:, late].max(axis=1) - values[:, early].max(axis=1)


def rising_at_horizon(values):
    """Per seed of `values` (iteration x seed), whether the quantity is positive and rising
    at the horizon: above its value at the previous logged t (the last logged interval) and
    at the last logged t <= t_last / 10 (the last decade). Also (t_before, before, t_prev,
    prev): those earlier values and their t."""
    last = values.iloc[-1].to_numpy(dtype=float)
    t_last = values.index[-1]
    earlier = values.loc[values.index <= t_last / 10]
    t_before = int(earlier.index[-1]) if len(earlier) else int(values.index[0])
    before = values.loc[t_before].to_numpy(dtype=float)
    t_prev = int(values.index[-2]) if len(values) > 1 else int(t_last)
    prev = values.loc[t_prev].to_numpy(dtype=float)
    rising = (last > 0) & (last > before) & (last > prev)
    return rising, t_before, before, t_prev, prev
