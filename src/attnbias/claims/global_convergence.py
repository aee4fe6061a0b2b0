"""Global convergence (Thm. 1, Lem. 2, App. C.1, Thm. 6): from a bad stationary direction
(fig8, its random variant) and from many random initial directions (the study), training
still reaches W_mm's direction and minimizes the loss; GD too (Thm. 6)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnbias.claims.claim import Statement, frame
from attnbias.claims.measure import (
    MONOTONE_TOLERANCE,
    R2_MIN,
    fit_per_seed,
    fitted_bound,
    has,
    largest_decrease,
    series,
    window,
)
from attnbias.claims.rows import Measured, Rows, Said, Verdict, spread

# App. C.1's "minimizes the train loss": L - L* ends at most this fraction of its start (ours)
LOSS_FRACTION = 0.01
THM6_RATE = -1.0  # slope of ln(1 - cos) against ln ln t of 1/ln t (Thm. 6 states no rate)

# how a run of the global-convergence study ends (attnbias.studies.global_outcomes decides
# it), and the words the rows print for each
OUTCOMES = ("reached", "undecided", "slower", "left_float64", "failed")
OUTCOME_WORDS = {
    "reached": "reached",
    "undecided": "still falling at least like 1/ln t",
    "slower": "still falling, more slowly than 1/ln t",
    "left_float64": "left float64's range",
    "failed": "failed",
}

CLAIM = "convergence is global: from a bad stationary direction training reaches W_mm."


def _final_gap(misalignment, opt: str, t_last: int) -> Measured:
    """What a global-convergence row measures: 1 - cos(W_t, W_mm) of `opt` at the last t."""
    return Measured(
        "1 - cos(W_t, W_mm) at the last t",
        f"t = {t_last}",
        misalignment.iloc[-1].to_numpy(),
        opt=opt,
        value_text=f"1 - cos(W_t, W_mm) = {spread(misalignment.iloc[-1])} at t = {t_last}",
    )


def bad_init_rows(rows: Rows) -> None:
    """A random start in a bad stationary direction: the optimal softmax starts below 1/T,
    ends above 0.99, and the alignment gap decreases late in the run."""
    table, T_tokens, t_last = rows.run.table, rows.run.T_tokens, rows.run.t_last
    for opt in rows.runs():
        softmax = series(table, opt, "opt_softmax")
        misalignment = series(table, opt, "gap_W")
        late = window(misalignment, t_last / 100, t_last)
        rows.add(
            Said(f"{opt} global", CLAIM, source=rows.source("Thm. 1, App. C.1")),
            _final_gap(misalignment, opt, t_last),
            Verdict(
                f"opt softmax starts below 1/T = {1 / T_tokens:.3g} "
                f"(measured {softmax.iloc[0].max():.3g} at most) and ends above 0.99 "
                f"({softmax.iloc[-1].min():.4g} at least); the gap decreases over "
                f"[{t_last // 100}, {t_last}]",
                np.all(softmax.iloc[0] < 1 / T_tokens)
                and np.all(softmax.iloc[-1] > 0.99)
                and bool(np.all(np.diff(late.to_numpy(), axis=0) <= 0)),
            ),
        )


def bad_init_2d_rows(rows: Rows) -> None:
    """App. C.1's 2-D instance (fig8): per-sample softmax of the optimal token.

    The "bad" samples are those whose optimal token starts below 1/T (the start favours
    another token); the others start above it.
    """
    table, T_tokens, t_last = rows.run.table, rows.run.T_tokens, rows.run.t_last
    samples = sorted(
        int(m.rsplit("_", 1)[1]) for m in set(table["metric"]) if m.startswith("opt_softmax_")
    )
    for opt in rows.runs():
        softmax = {i: series(table, opt, f"opt_softmax_{i}") for i in samples}
        bad = [i for i in samples if np.all(softmax[i].iloc[0] < 1 / T_tokens)]
        good = [i for i in samples if i not in bad]
        for i in bad:
            s = softmax[i]
            start, first, lowest = s.iloc[0].to_numpy(), s.iloc[1].to_numpy(), s.min().to_numpy()
            when = s.idxmin().to_numpy()
            others_rise = all(np.all(softmax[j].iloc[1] > softmax[j].iloc[0]) for j in good)
            rows.add(
                Said(
                    f"{opt} sample {i + 1} dips",
                    "from a start that favours a non-optimal token, that sample's optimal "
                    "softmax first falls, while the other sample's rises.",
                    source=rows.source("App. C.1", ", {} (plots 1-2)"),
                ),
                Measured(
                    f"lowest opt softmax of sample {i + 1} (at t = "
                    f"{', '.join(f'{w:g}' for w in when)})",
                    f"t in [0, {t_last}]",
                    lowest,
                    opt=opt,
                    value_text=f"lowest opt softmax {spread(lowest)}",
                ),
                Verdict(
                    f"starts at {start.max():.3g} < 1/T = {1 / T_tokens:.3g}; holds if it "
                    f"falls from t = {s.index[0]:g} to t = {s.index[1]:g} and the opt softmax "
                    f"of sample(s) {', '.join(str(j + 1) for j in good) or 'none'} rises",
                    bool(np.all(start < 1 / T_tokens) and np.all(first < start) and others_rise),
                ),
            )
        misalignment = series(table, opt, "gap_W")
        late = window(misalignment, t_last / 100, t_last)
        ends = min(float(softmax[i].iloc[-1].min()) for i in samples)
        rows.add(
            Said(
                f"{opt} global", CLAIM, source=rows.source("Thm. 1, App. C.1", ", {} (plots 3-4)")
            ),
            _final_gap(misalignment, opt, t_last),
            Verdict(
                f"every sample's opt softmax ends above 0.99 ({ends:.4g} at least); the gap "
                f"decreases over [{t_last // 100}, {t_last}] (the loss: the next row)",
                bool(bad) and ends > 0.99 and bool(np.all(np.diff(late.to_numpy(), axis=0) <= 0)),
            ),
        )


def minimizes_loss_rows(rows: Rows) -> None:
    """App. C.1: from the bad direction GD "minimizes the train loss". With u fixed the
    loss's infimum is L* = (1/n) sum_i exp(-y_i u^T x_opt,i) (all attention on the optimal
    tokens), so minimizing is L - L* -> 0: ln(L - L*) (logged) falls at every logged step and
    ends at most LOSS_FRACTION of its start (ours)."""
    table, t_last = rows.run.table, rows.run.t_last
    for opt in rows.runs():
        if not has(table, opt, "log_excess_loss"):
            continue
        excess = series(table, opt, "log_excess_loss")
        drop = (excess.iloc[-1] - excess.iloc[0]).to_numpy() / math.log(10)
        rises = largest_decrease(-excess)  # each rise of ln(L - L*), relative to its size
        monotone = bool(np.all(rises <= MONOTONE_TOLERANCE))
        limit = math.log10(LOSS_FRACTION)
        worst = float(drop.max())
        rows.add(
            Said(
                f"{opt} minimizes loss",
                "from the bad direction, training minimizes the train loss: L - L* goes to 0.",
                source=rows.source("App. C.1", ", {} (plot 3)"),
            ),
            Measured(
                f"log10 of (L - L*) at t = {t_last} over (L - L*) at t = {excess.index[0]:g}, "
                "with L* = (1/n) sum_i exp(-y_i u^T x_opt,i) the infimum of the loss (u fixed)",
                f"t in [{excess.index[0]:g}, {t_last}]",
                drop,
                opt=opt,
                value_text=f"L - L* fell by 10^{spread(-drop, '.3g')}; ln(L - L*) "
                f"{'falls at every logged step' if monotone else 'rises somewhere'} (largest "
                f"relative rise {spread(rises)})",
            ),
            Verdict(
                f"holds if ln(L - L*) never rises between logged steps and L - L* ends at most "
                f"{LOSS_FRACTION:g} of its start on every seed (ours: 'minimizes' read as L - L* "
                "falling toward 0)",
                monotone and worst <= limit,
                kind="threshold",
                detail=f"our threshold {LOSS_FRACTION:g}; it flips at a fraction 10^{worst:.3g} "
                "(the worst seed)" + ("" if monotone else "; ln(L - L*) rises somewhere"),
            ),
        )


def gd_global_rows(rows: Rows) -> None:
    """Thm. 6: GD with a constant step converges globally (asymptotically, no rate) to W_mm
    under Thm. 1's conditions. A finite run cannot refute an asymptotic statement: the row
    holds while 1 - cos(W_t, W_mm) still falls at least as fast as 1/ln t over the last decade
    (THM6_RATE against ln ln t: the slowest directional rate the paper proves, Thm. 3's;
    ours), and reads undecided where it falls more slowly or levels off."""
    table, t_last = rows.run.table, rows.run.t_last
    for opt in rows.runs("gd"):
        curve = series(table, opt, "gap_W")
        late = window(curve, t_last / 10, t_last)
        late = late[(late > 0).all(axis=1)]
        slopes, r2 = fit_per_seed(late, lambda t: np.log(np.log(t)), np.log)
        within = bool(np.all(slopes <= THM6_RATE))
        holds, undecided = fitted_bound(slopes, r2, within)
        if not within and not undecided:  # asymptotic: slower reads undecided, never fails
            undecided = True
        detail = (
            f"poor fit (R^2 {np.min(r2):.3f} < {R2_MIN:g})"
            if np.min(r2) < R2_MIN
            else ""
            if within
            else f"slower than 1/ln t over the last decade (slopes {spread(slopes)} against "
            f"{THM6_RATE:g}): levelling off or merely slow, which a run of {t_last} steps cannot "
            "tell apart"
        )
        rows.add(
            Said(f"{opt} thm6 global", "GD (constant step) converges in direction to W_mm."),
            Measured(
                "slope of ln(1 - cos(W_t, W_mm)) against ln ln t",
                f"t in [{t_last // 10}, {t_last}]",
                slopes,
                opt=opt,
                value_text=f"slope {spread(slopes)} against {THM6_RATE:g} (1/ln t); 1 - cos(W_t, "
                f"W_mm) {spread(curve.iloc[-1])} at t = {t_last}",
                r2=r2,
            ),
            Verdict(
                f"asymptotic (no rate): holds while every slope <= {THM6_RATE:g}, i.e. the gap "
                "still falls at least like 1/ln t (ours: Thm. 3's rate, the slowest the paper "
                f"proves for a direction), R^2 >= {R2_MIN:g}; slower or a poor fit: undecided",
                holds,
                undecided=undecided,
                detail=detail,
            ),
        )


# the global-convergence study (results/global_convergence.*), judged by study_claims
STUDY = Statement(
    key="study",
    result="Global convergence (Thm. 1, Lem. 2; the study)",
    quote="from any initial direction with a small norm, it reaches W_mm's direction",
    where="Thm. 1, Thm. 7, Lem. 2, Sec. 3",
    section="Sec. 3",
    layouts=("study",),
    covers=None,
    data="random Example 1-like data with correlated tokens and unequal scores",
    kind="measurement",
    measure=lambda rows: None,
)


def _outcome_counts(outcomes) -> dict[str, int]:
    """How many runs ended in each of OUTCOMES (an unknown outcome is an error)."""
    unknown = sorted(set(outcomes) - set(OUTCOMES))
    if unknown:
        raise ValueError(f"study runs with unknown outcomes {unknown}; expected {OUTCOMES}")
    values = list(outcomes)
    return {name: values.count(name) for name in OUTCOMES}


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[name]} {OUTCOME_WORDS[name]}" for name in OUTCOMES)


def _verdict_detail(counts: dict[str, int], missed: pd.DataFrame, threshold: float) -> str:
    """What a study row's verdict adds where not every start reached: the outcomes, and
    where the finite runs that missed ended next to the threshold (`missed`: their rows)."""
    gaps = missed["final_gap"].dropna()
    where = (
        f" (1 - cos(W_t, W_mm) ends at {gaps.min():.4g} to {gaps.max():.4g}, "
        f"{gaps.min() / threshold:.3g} to {gaps.max() / threshold:.3g} times the threshold)"
        if len(gaps)
        else ""
    )
    if counts["failed"]:
        return f"{counts['failed']} failed" + where
    return (
        "at this horizon: "
        + ", ".join(
            f"{counts[name]} {OUTCOME_WORDS[name]}"
            for name in ("undecided", "slower", "left_float64")
            if counts[name]
        )
        + where
    )


def study_claims(
    runs: pd.DataFrame, assumptions: pd.DataFrame, settings: dict, specs: dict
) -> pd.DataFrame:
    """Rows of the global-convergence study: per setting and optimizer, how the random
    initial directions at the smallest scale (Lem. 2 asks for a small initial norm; its bound
    was lost) ended (column `outcome`, studies.global_outcomes): holds if every one reached
    W_mm's direction within the budget; does not hold if one failed (finite, short of the
    threshold and no longer falling); else undecided at this horizon (still falling, at
    least like 1/ln t or more slowly, or left float64's range). `assumptions` holds each
    setting's measured hypotheses (attnbias.data.hypotheses.report columns); `specs` the
    study's optimizers as resolved once (optim.spec.resolve), which say their algorithms."""
    out = []
    small = runs["scale"].min()
    budget = f"1 - cos(W_t, W_mm) < {settings['threshold']:g} within {settings['iterations']} steps"
    for setting, by_setting in runs.groupby("setting", sort=False):
        row = assumptions[assumptions["setting"] == setting].iloc[0].to_dict()
        hypotheses = {k: v for k, v in row.items() if k.startswith(("ass1", "ass2"))}
        rows = Rows(setting, hypotheses, specs=specs)
        rows.statement = STUDY
        for opt, group in by_setting.groupby("optimizer", sort=False):
            starts = group[group["scale"] == small]
            reached = starts["reached"].to_numpy(dtype=float)
            counts = _outcome_counts(starts["outcome"])
            everywhere = _outcome_counts(group["outcome"])
            failed = counts["failed"] > 0
            rows.add(
                Said(
                    f"study {opt} global",
                    "from any initial direction with a small norm, it reaches W_mm's direction.",
                ),
                Measured(
                    f"{rows.label(opt)}: fraction of the {len(reached)} random W0 with ||W0|| = "
                    f"{small:g} that reach ({budget}); over every scale: "
                    f"{_counts_text(everywhere)}",
                    f"t <= {settings['iterations']}",
                    reached,
                    opt=opt,
                    value_text=f"of {len(reached)} starts: {_counts_text(counts)}",
                ),
                Verdict(
                    "holds if every run at the smallest scale reaches; does not hold if one "
                    "failed (finite, short of the threshold, and its gap no longer falls: it "
                    "rose over the last logged interval, or over the last decade); else "
                    "undecided (the claim is asymptotic: a run still falling, whether at least "
                    f"like 1/ln t (slope of ln(1 - cos) against ln ln t <= {THM6_RATE:g} over "
                    "the last decade) or more slowly, or one that left float64's range, "
                    "cannot refute it)",
                    bool(np.all(reached == 1)),
                    undecided=not failed and not bool(np.all(reached == 1)),
                    detail=""
                    if np.all(reached == 1)
                    else _verdict_detail(counts, starts[~starts["reached"]], settings["threshold"]),
                ),
            )
        out += rows.rows
    return frame(out)
