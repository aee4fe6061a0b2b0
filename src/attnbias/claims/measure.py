"""Reading the aggregate tables: a metric per seed, windows, fits, first crossings, races.

Everything a row measures goes through these; the thresholds and tolerances that decide a
verdict are here, with the reason for each.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

CLOSENESS_TOLERANCE = 0.25  # |measured / predicted - 1| for "closely predicted" rows
MONOTONE_TOLERANCE = 1e-12  # relative: a decrease below this is rounding
R2_MIN = 0.9  # a fitted slope with a smaller R^2 (on some seed) decides nothing: "undecided"
BURN_IN = 100  # comparisons over the whole run start at t_last / BURN_IN


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
    if not table["metric"].str.startswith("first_gap_W_below_").any():
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
    if np.all(np.isinf(first)):
        return f"not reached by t = {t_last}"
    reached = first[np.isfinite(first)]
    missing = int(np.sum(np.isinf(first)))
    text = f"{reached.mean():.4g} ({reached.min():g} to {reached.max():g})"
    return text + (f" ({missing} seeds not by t = {t_last})" if missing else "")


def race(first: np.ndarray, rival: np.ndarray) -> tuple[bool, bool]:
    """(holds, undecided) of "crosses before the rival", seed by seed (inf: never crossed).

    Holds if every seed crosses strictly first; does not hold if the rival crosses first on
    some seed; otherwise (some seed where neither gets there, or a tie) undecided."""
    won, lost = first < rival, rival < first
    if won.all():
        return True, False
    return False, not lost.any()


def ahead(mine: pd.DataFrame, rival: pd.DataFrame) -> tuple[np.ndarray, bool, bool]:
    """Per seed, the last logged t at which `mine` is not below `rival` (0: never); and
    (holds, undecided) of "below at every logged t": does not hold if `mine` ends at or
    above the rival on some seed, undecided if it ends below but was not below throughout."""
    mine, rival = mine.align(rival, join="inner")
    behind = mine >= rival
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
