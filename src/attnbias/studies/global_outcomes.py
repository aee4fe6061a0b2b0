"""How each run of the global-convergence study ends, decided as the claims decide a row.

A finite run cannot refute an asymptotic statement, and a float64 overflow is not the
algorithm's verdict. So a run's outcome is one of claims.global_convergence.OUTCOMES:

  reached        1 - cos(W_t, W_mm) fell below the threshold at a logged iteration;
  undecided      it did not, but the gap still falls at the rate the claims read for a
                 direction (slope of ln gap against ln ln t at most THM6_RATE, i.e. at
                 least as fast as 1/ln t, over the last decade of the run) and fell over
                 the last logged interval: the horizon, not the algorithm, ended it;
  left_float64   a metric or parameter stopped being finite (the trainer then gives the
                 run NaN everywhere, training.loop): float64's range gave out, which says
                 nothing of the algorithm by itself (docs/studies.md: what an exact
                 evaluation of PS shows);
  slower         it did not, and still falls over the last decade and the last logged
                 interval, but more slowly than 1/ln t: undecided too (as the claims read
                 Thm. 6: a finite run cannot tell "merely slow" from "levelling off");
  failed         finite, not reached and no longer falling: it rose over the last logged
                 interval or over the last decade (late slope >= 0): the only outcome read
                 as the algorithm's failure.
"""

from __future__ import annotations

import numpy as np

from attnbias.claims.global_convergence import OUTCOMES, THM6_RATE


def late_slopes(grid: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """Per run, the least-squares slope of ln gap against ln ln t over the last decade of
    the logged grid (t in [t_last / 10, t_last], t > 1). gaps (B, len(grid)), positive where
    finite; NaN for a run with a non-finite or non-positive gap in the window."""
    grid = np.asarray(grid, dtype=float)
    window = (grid >= grid[-1] / 10) & (grid > 1)
    if window.sum() < 3:
        raise ValueError(
            f"the last decade of the log grid holds {int(window.sum())} iterations (t > 1); "
            "the late slope needs 3: raise global_convergence.iterations or log_points"
        )
    x = np.log(np.log(grid[window]))
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.log(gaps[:, window])
    x = x - x.mean()
    slopes = ((y - y.mean(axis=1, keepdims=True)) * x).sum(axis=1) / (x @ x)
    return np.where(np.isfinite(slopes), slopes, np.nan)


def classify(grid: np.ndarray, gaps: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(outcome per run, one of OUTCOMES; late slope per run, see late_slopes).

    grid: the logged iterations; gaps (B, len(grid)): 1 - cos(W_t, W_mm) there, NaN for a
    run whose values stopped being finite."""
    gaps = np.asarray(gaps, dtype=float)
    slopes = late_slopes(grid, gaps)
    left = ~np.isfinite(gaps).all(axis=1)
    reached = (gaps < threshold).any(axis=1) & ~left
    falling = (gaps[:, -1] < gaps[:, -2]) & (slopes < 0)  # False on NaN
    at_rate = falling & (slopes <= THM6_RATE)
    outcome = np.select(
        [left, reached, at_rate, falling],
        ["left_float64", "reached", "undecided", "slower"],
        default="failed",
    )
    if not set(outcome) <= set(OUTCOMES):  # the claims' list names every outcome
        raise AssertionError(f"outcomes {sorted(set(outcome))} outside {OUTCOMES}")
    return outcome.astype(object), slopes
