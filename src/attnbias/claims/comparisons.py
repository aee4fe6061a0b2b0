"""Which optimizer gets ahead: Sec. 3.3 (NGD and PS before GD, proved on the two-token
example), Fig. 2's remarks (NGD significantly faster than GD, PS outperforms NGD and is
faster in every metric, momentum boosts NGD), Fig. 3's (every other algorithm faster than
GD, PS the fastest, NGD slightly faster than joint NGD, the loss at a similar rate) and
Fig. 9's (NGD faster than GD).

A race on first crossings uses the exact crossings of CROSSING_THRESHOLDS; "ahead" is read
over the whole run after a burn-in (measure.ahead, races.race_row). The rivals are chosen by
their algorithm, never by their config names.
"""

from __future__ import annotations

import numpy as np

from attnbias.claims.caps import caps_note
from attnbias.claims.coverage import algorithm_name
from attnbias.claims.measure import (
    CLOSENESS_TOLERANCE,
    PASSAGE_UNIT,
    R2_MIN,
    describe_passage,
    first_crossing,
    fit_per_seed,
    fitted_bound,
    has,
    race,
    series,
    window,
)
from attnbias.claims.races import race_row
from attnbias.claims.rows import Measured, Rows, Said, Verdict, spread
from attnbias.claims.thresholds import band_near_text, threshold_row
from attnbias.training.metrics import CROSSING_THRESHOLDS  # a leaf: no torch in claims

# Fig. 3's "NGD is slightly faster than joint-NGD": ours, "slightly" as within this factor
SLIGHTLY = 2.0

# The converging quantities each layout's figure draws, (metric, in words), lower ahead. The
# fixed decoder's loss tends to L* > 0 (all attention on the optimal tokens): it is raced
# as L - L*, which orders the runs as the loss does and keeps resolving them where L rounds
# to L* (the figure's panel (b)).
W_GAP = ("gap_W", "1 - cos(W_t, W_mm)")
SOFTMAX = ("log1m_opt_softmax", "ln(1 - mean opt softmax)")
FIXED_METRICS = (W_GAP, ("log_excess_loss", "ln(L - L*)"), SOFTMAX)
JOINT_METRICS = (W_GAP, ("gap_u", "1 - cos(u_t, u_mm)"), ("log_loss", "ln L"), SOFTMAX)
# A norm is ahead where it is larger ("all metrics" includes Fig. 2's ||W_t|| panel)
W_NORM = ("W_norm", "||W_t||")


def crossing_race_rows(rows: Rows) -> None:
    """Sec. 3.3: NGD (and PS) reach W_mm's direction before GD: the exact first crossings of
    each threshold, for every other algorithm. Proved on the two-token example for NGD;
    elsewhere, and for other algorithms, a comparison."""
    gd = rows.baseline()
    if gd is None:
        return
    table, t_last, seeds = rows.run.table, rows.run.t_last, rows.run.seeds
    two_token = rows.run.layout == "two_token"
    for opt in [o for o in rows.runs() if o != gd]:
        name = algorithm_name(rows.algorithms[opt])
        scope = f"{name} against GD off Sec. 3.3's two-token example"
        for threshold in CROSSING_THRESHOLDS:
            gd_first = first_crossing(table, gd, threshold, seeds)
            first = first_crossing(table, opt, threshold, seeds)
            holds, undecided = race(first, gd_first)
            rows.add(
                Said(
                    f"faster than gd {opt} {threshold:g}",
                    f"reaches 1 - cos(W_t, W_mm) < {threshold:g} before GD.",
                    covers=("ngd", "ps") if two_token else (),
                    scope="" if two_token else scope,
                ),
                Measured(
                    f"first iteration with 1 - cos(W_t, W_mm) < {threshold:g} (exact, every step "
                    "checked), against GD's",
                    f"t <= {t_last}",
                    first,
                    opt=opt,
                    value_text=f"{PASSAGE_UNIT} {rows.label(opt)} "
                    f"{describe_passage(first, t_last)}; "
                    f"{rows.label(gd)} {describe_passage(gd_first, t_last)}",
                ),
                Verdict(
                    "holds if it crosses first on every seed, does not hold if GD crosses first on "
                    "one, undecided where neither crosses",
                    holds,
                    undecided=undecided,
                ),
            )


def fig2_ngd_vs_gd_rows(rows: Rows) -> None:
    """Fig. 2: "NGD is significantly faster than standard GD" (1 - cos over the whole run)."""
    gd = rows.baseline()
    if rows.figure != "Fig. 2" or gd is None:
        return
    for opt in rows.runs("ngd", "ngd-capped"):
        claim = "1 - cos(W_t, W_mm) is below GD's at every logged t after the burn-in."
        race_row(rows, opt, gd, "gap_W", "1 - cos(W_t, W_mm)", Said(f"ahead of gd {opt}", claim))


def fig2_ps_fastest_rows(rows: Rows) -> None:
    """Fig. 2: PS "empirically outperforms NGD": PS's first crossing before NGD's and
    NGD-mom's, and PS below NGD over the whole run."""
    if rows.figure != "Fig. 2":
        return
    table, t_last, seeds = rows.run.table, rows.run.t_last, rows.run.seeds
    others = rows.runs("ngd", "ngd-capped", "ngd-mom", "ngd-mom-capped", twins=True)
    if not others:
        return
    threshold = CROSSING_THRESHOLDS[0]
    rival = np.min([first_crossing(table, o, threshold, seeds) for o in others], 0)
    for opt in rows.runs("ps", "ps-capped"):
        first = first_crossing(table, opt, threshold, seeds)
        holds, undecided = race(first, rival)
        note = caps_note(rows, [opt, *others])
        rows.add(
            Said(
                "ps fastest", "reaches W_mm's direction first (PS 'empirically outperforms NGD')."
            ),
            Measured(
                f"first iteration with 1 - cos(W_t, W_mm) < {threshold:g}, against the earliest of "
                f"{' and '.join(map(rows.label, others))} per seed",
                f"t <= {t_last}",
                first,
                opt=opt,
                value_text=f"{PASSAGE_UNIT} {rows.label(opt)} {describe_passage(first, t_last)}; "
                f"{' or '.join(map(rows.label, others))} (the earliest per seed) "
                f"{describe_passage(rival, t_last)}" + (f"; {note}" if note else ""),
            ),
            Verdict(
                "holds if PS crosses first on every seed, undecided where none crosses",
                holds,
                undecided=undecided,
            ),
        )
    # and over the whole run
    w_races(rows, rows.runs("ps", "ps-capped"), rows.runs("ngd", "ngd-capped", twins=True), "")


def w_races(rows: Rows, subjects: list, rivals: list, why: str) -> None:
    """A race in 1 - cos(W_t, W_mm) over the whole run of each subject with each rival;
    `why`: what the claim adds to the sentence (" (PS the fastest)")."""
    for opt in subjects:
        for rival in rivals:
            claim = (f"1 - cos(W_t, W_mm) is below {rows.label(rival)}'s at every logged t after "
                     f"the burn-in{why}.")  # fmt: skip
            said = Said(f"{opt} ahead of {rival}", claim)
            race_row(rows, opt, rival, "gap_W", "1 - cos(W_t, W_mm)", said)


def metric_races(rows: Rows, subjects: list, rivals: list, metrics: tuple, why: str,
                 higher: tuple = ()) -> None:  # fmt: skip
    """A race over the whole run of each subject with each rival in each of `metrics`
    ((metric, in words); those in `higher` ahead where larger) that both runs logged;
    `why`: what the claim adds to the sentence."""
    table = rows.run.table
    for opt in subjects:
        for rival in rivals:
            for metric, what in metrics:
                if not (has(table, opt, metric) and has(table, rival, metric)):
                    continue
                up = metric in higher
                claim = (f"{what} is {'above' if up else 'below'} {rows.label(rival)}'s at every "
                         f"logged t after the burn-in{why}.")  # fmt: skip
                said = Said(f"{opt} ahead of {rival} {metric}", claim)
                race_row(rows, opt, rival, metric, what, said, higher=up)


def fig2_ps_all_metrics_rows(rows: Rows) -> None:
    """Fig. 2: "PS leads to even faster convergence than NGD across all metrics, including
    the train loss": a race with NGD in every metric the figure draws (the step size aside,
    which is no convergence), ||W_t|| ahead where larger."""
    if rows.figure != "Fig. 2":
        return
    ps, ngd = rows.runs("ps", "ps-capped"), rows.runs("ngd", "ngd-capped", twins=True)
    # 1 - cos(W_t, W_mm) aside: the race of "PS outperforms NGD" (fig2_ps_fastest_rows) is
    # that one, counted once
    metrics = tuple(m for m in FIXED_METRICS if m != W_GAP) + (W_NORM,)
    metric_races(rows, ps, ngd, metrics, " ('across all metrics')", higher=(W_NORM[0],))


def fig9_ngd_vs_gd_rows(rows: Rows) -> None:
    """Fig. 9: "normalized gradient descent achieves faster convergence than standard
    gradient descent": a race with GD in each converging quantity the figure draws."""
    gd = rows.baseline()
    if rows.figure != "Fig. 9" or gd is None:
        return
    metric_races(rows, rows.runs("ngd", "ngd-capped"), [gd], FIXED_METRICS, "")


def fig2_momentum_rows(rows: Rows) -> None:
    """Fig. 2: NGD with momentum "results in a performance boost" over NGD, in W."""
    if rows.figure != "Fig. 2":
        return
    ngd = rows.runs("ngd", "ngd-capped", twins=True)
    w_races(rows, rows.runs("ngd-mom", "ngd-mom-capped"), ngd, " ('a performance boost')")


def fig3_faster_than_gd_rows(rows: Rows) -> None:
    """Fig. 3: "all other algorithms are faster than GD", in each converging quantity the
    figure draws: W's and u's directions, the loss and the optimal softmax."""
    gd = rows.baseline()
    if rows.figure != "Fig. 3" or gd is None:
        return
    # Fig. 3's run has each of the figure's algorithms; another experiment citing Fig. 3
    # (fig3_cond1: other data, no PS) reads as a comparison
    figures_run = set(rows.statement.covers) <= set(rows.algorithms.values())
    scope = {} if figures_run else {"covers": (), "scope": "a run other than Fig. 3's"}
    for opt in rows.runs():
        if opt == gd:
            continue
        for metric, what in JOINT_METRICS:
            if not (has(rows.run.table, opt, metric) and has(rows.run.table, gd, metric)):
                continue
            claim = f"{what} is below GD's at every logged t after the burn-in."
            race_row(
                rows, opt, gd, metric, what, Said(f"ahead of gd {opt} {metric}", claim, **scope)
            )


def fig3_ps_fastest_rows(rows: Rows) -> None:
    """Fig. 3: "with PS being the fastest": PS ahead of the figure's NGD and joint NGD in
    each converging quantity the figure draws (W's direction first, as before)."""
    if rows.figure != "Fig. 3":
        return
    rivals = rows.runs("per-block-ngd", "joint-ngd", twins=True)
    ps = rows.runs("ps", "ps-capped")
    w_races(rows, ps, rivals, " (PS the fastest)")
    metric_races(rows, ps, rivals, JOINT_METRICS[1:], " (PS the fastest)")


def fig3_ngd_vs_joint_rows(rows: Rows) -> None:
    """Fig. 3: "NGD is slightly faster than joint-NGD" in W and u: a race in each, and
    "slightly" (joint NGD's final 1 - cos within SLIGHTLY of NGD's, ours)."""
    if rows.figure != "Fig. 3":
        return
    table, t_last = rows.run.table, rows.run.t_last
    for opt in rows.runs("per-block-ngd"):
        for rival in rows.runs("joint-ngd", twins=True):
            for metric, what in (("gap_W", "1 - cos(W_t, W_mm)"), ("gap_u", "1 - cos(u_t, u_mm)")):
                claim = f"{what} is below joint NGD's at every logged t after the burn-in."
                said = Said(f"{opt} ahead of {rival} {metric}", claim)
                race_row(rows, opt, rival, metric, what, said)
            gap = series(table, rival, "gap_W").iloc[-1] / series(table, opt, "gap_W").iloc[-1]
            said = Said(
                f"{opt} slightly ahead of {rival}",
                "only slightly ahead of joint NGD in W: joint NGD's 1 - cos(W_t, W_mm) at the "
                f"last t is within a factor {SLIGHTLY:g} of NGD's.",
            )
            measured = Measured(
                f"joint NGD's 1 - cos(W_t, W_mm) over NGD's at t = {t_last}",
                f"t = {t_last}",
                gap.to_numpy(),
                opt=opt,
                value_text=f"ratio {spread(gap)} over the seeds",
            )
            threshold_row(
                rows, said, measured, SLIGHTLY, above=False,
                ours="'slightly' read as within a factor 2",
            )  # fmt: skip


def fig3_similar_loss_rows(rows: Rows) -> None:
    """Fig. 3: "the train loss converges at a similar rate for NGD and joint-NGD": the
    exponents k of -ln L ~ t^k within CLOSENESS_TOLERANCE of each other."""
    if rows.figure != "Fig. 3":
        return
    table, t_last = rows.run.table, rows.run.t_last

    def exponents(opt):
        late = window(series(table, opt, "log_loss"), t_last / 10, t_last)
        return fit_per_seed(late, np.log, lambda v: np.log(-v))

    for opt in rows.runs("per-block-ngd"):
        for rival in rows.runs("joint-ngd", twins=True):
            (k, r2), (k_rival, r2_rival) = exponents(opt), exponents(rival)
            ratio = k / k_rival
            close = np.all(np.abs(ratio - 1) <= CLOSENESS_TOLERANCE)
            holds, undecided = fitted_bound(None, np.minimum(r2, r2_rival), close)
            near = band_near_text(ratio, CLOSENESS_TOLERANCE)
            rows.add(
                Said(
                    f"{opt} loss rate like {rival}",
                    "the train loss converges at a similar rate as joint NGD's.",
                ),
                Measured(
                    "exponent k of -ln L ~ t^k (slope of ln(-ln L) against ln t), NGD's over "
                    "joint NGD's",
                    f"t in [{t_last // 10}, {t_last}]",
                    ratio,
                    opt=opt,
                    value_text=f"ratio {spread(ratio)} (k: NGD {spread(k)}, joint NGD "
                    f"{spread(k_rival)}); tolerance 1 +- {CLOSENESS_TOLERANCE:g}",
                    r2=np.minimum(r2, r2_rival),
                ),
                Verdict(
                    f"holds if within 1 +- {CLOSENESS_TOLERANCE:g} (our tolerance) on every seed "
                    f"(R^2 >= {R2_MIN:g}, else undecided)",
                    holds,
                    undecided=undecided,
                    detail=f"ratio {spread(ratio)}, tolerance 1 +- {CLOSENESS_TOLERANCE:g}"
                    + (f"; {near}" if near else ""),
                ),
            )
