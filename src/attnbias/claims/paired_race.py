"""A paired race on the real data: which of two optimizers trains faster, read over seeds as
a referee would. Every optimizer of a seed starts from the same weights and sees the same
batches (attnbias.realdata.trainer), so the runs of a seed are a pair; the quantity is, per
seed, the difference of the two runs' areas under the loss curve (the mean loss over the
run: the probe loss on a fixed subset of the training set where logged, else the logged
train loss), and the test is a one-sided paired t-test over the seeds at level ALPHA.

holds: `opt`'s area below `rival`'s, significant at ALPHA; does not hold: at or above it,
significant at ALPHA the other way, or the same run (no difference on any seed); undecided:
neither, with the number of seeds that would decide a gap of the measured size at the
measured spread (or more steps, where the gap is nil).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from attnbias.claims.rows import Measured, Rows, Said, Verdict, mean_spread
from attnbias.realdata.metric_names import BATCH_LOSS, PROBE_METRIC
from attnbias.realdata.tuning import curve_area

ALPHA = 0.05  # the paired test's one-sided level (ours)
MOST_SEEDS = 1000  # beyond this, "more seeds" is no advice


def race_metric(table) -> str:
    """The curve a race reads: the probe loss where the runs logged it, else train_loss."""
    return PROBE_METRIC if (table["metric"] == PROBE_METRIC).any() else "train_loss"


def check_paired(table, opt: str, rival: str) -> None:
    """Refuse runs that are not pairs: different seeds, or (where every step's loss is
    logged) a first step that read another batch or started elsewhere."""
    seeds = [sorted(table[table["optimizer"] == o]["seed"].unique()) for o in (opt, rival)]
    if seeds[0] != seeds[1]:
        raise ValueError(f"{opt} and {rival} ran other seeds ({seeds[0]}, {seeds[1]}): not paired")
    first = table[(table["metric"] == BATCH_LOSS) & (table["iteration"] == 0)]
    losses = [
        first[first["optimizer"] == o].sort_values("seed")["value"].to_numpy() for o in (opt, rival)
    ]
    if losses[0].size and losses[1].size and not np.allclose(losses[0], losses[1], rtol=1e-5):
        raise ValueError(
            f"{opt} and {rival} read different first batches or started from different "
            f"weights ({losses[0].tolist()} against {losses[1].tolist()}): not paired"
        )


def seeds_to_decide(differences: np.ndarray) -> int | None:
    """The fewest seeds at which a one-sided paired t-test at ALPHA would decide a gap of
    the measured mean at the measured spread; None where the mean is nil (no seed count
    decides it) or beyond MOST_SEEDS."""
    mean, sd = float(np.mean(differences)), float(np.std(differences, ddof=1))
    if mean == 0 or not np.isfinite(sd):
        return None
    for n in range(2, MOST_SEEDS + 1):
        if stats.t.ppf(1 - ALPHA, n - 1) * sd / math.sqrt(n) < abs(mean):
            return n
    return None


def paired_test(differences: np.ndarray) -> tuple[float, float]:
    """(t, one-sided p that the mean difference is below 0) of the paired t-test; a spread of
    0 gives t = -inf or +inf (every seed the same gap) and p 0 or 1."""
    n = differences.size
    mean, sd = float(np.mean(differences)), float(np.std(differences, ddof=1))
    if sd == 0:
        t = -math.inf if mean < 0 else (math.inf if mean > 0 else 0.0)
    else:
        t = mean / (sd / math.sqrt(n))
    p = float(stats.t.cdf(t, n - 1)) if np.isfinite(t) else float(t > 0)
    return t, p


def paired_race_row(rows: Rows, opt: str, rival: str, said: Said, note: str = "") -> None:
    """The race `opt` faster than `rival`, read on the paired seeds (module docstring)."""
    table = rows.run.table
    check_paired(table, opt, rival)
    metric = race_metric(table)
    what = "probe loss" if metric == PROBE_METRIC else "train loss"
    mine, theirs = curve_area(table, opt, metric), curve_area(table, rival, metric)
    mine, theirs = mine.align(theirs, join="inner")
    d = (mine - theirs).to_numpy()
    a, b, n = rows.label(opt), rows.label(rival), d.size
    test = f"one-sided paired t-test over the {n} seeds at level {ALPHA:g} (ours)"
    if n < 2:
        holds, undecided, t, p = False, True, math.nan, math.nan
        detail = "one seed: no paired test; more seeds would decide it"
    else:
        t, p = paired_test(d)
        holds, behind = p < ALPHA, 1 - p < ALPHA or not d.any()
        undecided = not holds and not behind
        if holds:
            detail = f"{a}'s area below {b}'s by the paired t-test, one-sided p = {p:.2g}"
        elif not d.any():
            detail = f"the same run on every seed: {a} is not ahead"
        elif behind:
            detail = f"{b}'s area below {a}'s by the paired t-test, one-sided p = {1 - p:.2g}"
        else:
            more = seeds_to_decide(d)
            detail = (
                f"paired t-test p = {p:.2g} one way, {1 - p:.2g} the other: the data cannot "
                f"decide it at level {ALPHA:g}; "
                + (f"about {more} seeds would decide a gap of this size at this spread"
                   if more else "the gap is nil at this spread: more steps, not seeds")
            )  # fmt: skip
    value_text = (
        f"area under the {what} curve over the run's length, mean (min to max) over seeds: "
        f"{a} {mean_spread(mine)}, {b} {mean_spread(theirs)}; paired difference {a} - {b} "
        f"{mean_spread(d)}"
        + (f", sd {np.std(d, ddof=1):.3g}; t = {t:.3g}, one-sided p = {p:.2g}" if n > 1 else "")
        + (f"; {note}" if note else "")
    )
    measured = Measured(
        f"{what} area (mean {what} over steps 0 to {rows.run.t_last}), {a} - {b}, paired by seed",
        f"t in [0, {rows.run.t_last}], seeds {', '.join(str(s) for s in mine.index)}",
        d,
        opt=opt,
        value_text=value_text,
    )
    verdict = Verdict(
        f"holds if {a}'s area is below {b}'s by the {test}; does not hold if above it by the "
        f"same test the other way, or equal on every seed; undecided otherwise",
        bool(holds),
        undecided=bool(undecided),
        kind="race",
        detail=detail,
    )
    rows.add(said, measured, verdict)
