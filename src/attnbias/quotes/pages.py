"""Every number that README.md's headlines and docs/findings.md quote from a build, with
where it comes from (attnbias.quotes.sources), and the sections generated whole.

An entry is found by the page's own words around its numbers ("{}" per number phrase), so
the prose stays as a reader writes it. Numbers that the text says were measured outside
the build (once, by hand) are not here; nor are the config's constants (caps, steps,
thresholds), which the config and its tests hold.
"""

from __future__ import annotations

import numpy as np

from attnbias.quotes import failures, fragile, regime
from attnbias.quotes import geometry_findings as geometry
from attnbias.quotes.quote import Fact, Section, Source, quote
from attnbias.quotes.sources import (
    at,
    behind,
    below_throughout,
    computed,
    created,
    every,
    final,
    first,
    hypothesis,
    last_behind,
    never,
    outcome,
    ratio,
    row,
    said,
    seeds,
    seeds_behind,
    series,
    step_reaches,
    summary,
)
from attnbias.quotes.sweeps import ETA, eta_cond1_table, held_at, sweep_count, sweep_value

README = "README.md"
FINDINGS = "docs/findings.md"
CLAIMS_DOC = "docs/claims.md"
MNIST5K = "results/fig6_mnist5k.pdf"

SUMMARY = (
    "**{} rows measure {} of the {} checkable statements of the paper ({} not measured "
    "here: their data are not in this build). On the algorithms and data the statements "
    "are made for: {} hold, {} do not hold, {} undecided; {} comparisons (an algorithm or "
    "data the statement is not made for); {} on data outside the hypotheses of the proofs "
    "of their section; {} consistency checks (outside the count).**"
)
SUMMARY_SOURCES = tuple(summary(i) for i in range(10))


def _max(values):
    return np.max(values)


def _min(values):
    return np.min(values)


def support_vectors(experiment: str) -> Source:
    return hypothesis(experiment, "cond1_sv_fraction")


def gap_u_union(experiment: str, *optimizers: str) -> Source:
    return computed(
        f"{experiment}: 1 - cos(u_t, u_mm) at the last t of {', '.join(optimizers)}, over seeds",
        lambda b: np.concatenate([b.final(experiment, o, "gap_u") for o in optimizers]),
    )


def slope_loglog(experiment: str, optimizer: str, metric: str, lo: float, hi: float) -> Source:
    """The largest slope over seeds of ln(metric) against ln t over [lo, hi]."""

    def read(b) -> float:
        values = b.series(experiment, optimizer, metric)
        window = values[(values.index >= lo) & (values.index <= hi)]
        t = np.log(window.index.to_numpy(dtype=float))
        return max(np.polyfit(t, np.log(window[s].to_numpy()), 1)[0] for s in window)

    return computed(
        f"{experiment} {optimizer}: largest log-log slope of {metric} over [{lo:g}, {hi:g}]", read
    )


def _opt_softmax(optimizer: str, sample: int, what: str, reduce) -> Source:
    return series(
        "fig8", optimizer, f"opt_softmax_{sample}", reduce, f"sample {sample + 1}: {what}"
    )


# ---------------------------------------------------------------------------------------
# README.md: the headlines ("What the default build shows")
README_ENTRIES = [
    quote(README, "The claims table sums it up: " + SUMMARY, *SUMMARY_SOURCES),
    quote(
        README,
        "at t = 10⁴, 1 − cos(W_t, W_mm) is {} for NGD, {} for PS, {} for GD; NGD first "
        "crosses 1e-3 at t = {}, GD not by 10⁴",
        final("fig2_uncapped", "ngd"),
        final("fig2_uncapped", "ps"),
        final("fig2_uncapped", "gd"),
        first("fig2_uncapped", "ngd", 1e-3),
    ),
    Fact(README, "NGD first crosses 1e-3", never("fig2_uncapped", "gd", 1e-3)),
    Fact(
        README,
        "both stay below GD at every logged t ≥ 100 on every seed",
        every(*(below_throughout("fig2_uncapped", o, "gd") for o in ("ngd", "ps"))),
    ),
    quote(
        README,
        "PS's cap 1e150 binds by t = {}, so PS is fastest early (1e-2 at t = {})",
        step_reaches("fig2", "ps"),
        first("fig2", "ps", 1e-2),
    ),
    Fact(
        README,
        "NGD's cap 1e150 never binds within 10⁴ steps",
        computed(
            "fig2 ngd: the step never reaches its cap",
            lambda b: bool(np.all(np.isnan(step_reaches("fig2", "ngd").read(b)))),
        ),
    ),
    quote(
        README,
        "Any cap up to 1e15 binds NGD by t ≈ {}",
        computed(
            "fig2 ngd: first t at which the step reaches 1e15, latest seed",
            lambda b: np.max(step_reaches("fig2", "ngd", 1e15).read(b)),
        ),
    ),
    quote(
        README,
        "NGD's measured rate is {} times faster",
        row("fig2_uncapped ngd rate closeness"),
    ),
    Fact(
        README,
        'so Fig. 2\'s remark "closely predicted by Thm. 1" does not hold',
        outcome("fig2_uncapped ngd rate closeness", "does not hold"),
    ),
    quote(
        README,
        "a + b ln t beats a power law by ΔAIC {}; GD's gap goes like 1/log² t (slope {} "
        "against log log t), NGD's like t⁻² ({}),",
        row("gd_vs_ngd gd norm log growth", "low"),
        row("gd_vs_ngd two token gd rate", "mean"),
        row("gd_vs_ngd two token ngd rate", "mean"),
    ),
    quote(
        README,
        "the loss falls like exp(−c √t) (exponent {} of −ln L) and below GD's throughout; u "
        "reaches {} of u_mm's margin (GD {}).",
        row("fig3 eq10 loss rate"),
        row("fig3 eq10 u margin", "low"),
        row("fig3 gd u margin", "mean"),
    ),
    Fact(
        README,
        "and below GD's throughout",
        outcome("fig3 ahead of gd eq10 log_loss", "holds"),
    ),
    Fact(
        README,
        "on fig3_cond1, inside, Thm. 2, Thm. 4 and Lem. 11 hold and Thm. 3's 1/log t bound is "
        "undecided",
        every(
            outcome("fig3_cond1 eq10 loss rate", "holds"),
            outcome("fig3_cond1 eq10 u direction", "holds"),
            outcome("fig3_cond1 eq10 u margin", "holds"),
            outcome("fig3_cond1 eq10 loss ratio", "holds"),
            outcome("fig3_cond1 eq10 W rate bound", "undecided"),
        ),
    ),
    quote(
        README,
        "W's slope against ln ln t is {}, slower than the bound's −1, but over a span of {} in "
        "ln ln t",
        row("fig3_cond1 eq10 W rate bound"),
        said("fig3_cond1 eq10 W rate bound", "over a span of only"),
    ),
    quote(
        README,
        "On fig3's data (d = nT) only {} are, and the log ratio grows by {} under Eq. 10; on "
        "fig3_cond1, where all are, it stays bounded (growth {}).",
        support_vectors("fig3"),
        row("fig3 eq10 loss ratio"),
        row("fig3_cond1 eq10 loss ratio"),
    ),
    quote(
        README,
        'NGD leads joint NGD in W by a factor {} (the paper says "slightly")',
        row("fig3 ngd slightly ahead of joint-ngd"),
    ),
    quote(
        README,
        "(NGD ahead of PS at 10⁴ on {} of {} seeds)",
        seeds_behind("fig3", "ps", "ngd"),
        seeds_behind("fig3", "ps", "ngd", of=True),
    ),
    quote(
        README,
        "sample 1's optimal-token softmax first falls ({} → {})",
        _opt_softmax("gd", 0, "first logged value", lambda v: v.iloc[0].to_numpy()),
        _opt_softmax("gd", 0, "lowest value", lambda v: v.min().to_numpy()),
    ),
    quote(
        README,
        "Lem. 11 (iii) fails at η = 0.1 ({} of {} seeds)",
        sweep_value(
            "eta_cond1", {"optimizers.eq10.lr": 0.1}, "failing_seeds", "lem11_ratio_bounded"
        ),
        sweep_value("eta_cond1", {"optimizers.eq10.lr": 0.1}, "seeds"),
    ),
    Fact(
        README,
        "Thm. 3's slope reaches −1 only at η = 0.1 and 0.3",
        held_at("eta_cond1", ETA, "thm3_rate", some_seed=True)(0.1, 0.3),
    ),
    Fact(
        README,
        "and only η = 1, the default, puts Eq. 10 ahead of GD",
        held_at("eta_cond1", ETA, "eq10_below_gd_W")(1.0),
    ),
    Fact(
        README,
        "**Fig. 3's order**: GD is slowest everywhere.",
        every(
            *(
                outcome(f"fig3 ahead of gd {o} {m}", "holds")
                for o in ("ngd", "ps", "joint-ngd", "eq10")
                for m in ("gap_W", "log_loss")
            )
        ),
    ),
    quote(
        README,
        "never in W (NGD ahead of PS at 10⁴ on 10 of 10 seeds), under every reading of PS in "
        "joint training tried (docs/findings.md) and in all {} settings of the fig3 sweep",
        sweep_count("fig3", "ps_fastest_W", False),
    ),
]

# ---------------------------------------------------------------------------------------
# docs/findings.md
FINDINGS_ENTRIES = [
    quote(FINDINGS, "`snakemake -c2` on {date}. The claims table", created()),
    quote(
        FINDINGS,
        "Measured on the default config ({} seeds; {} for fig3_cond1; {} for the deterministic "
        "fig8 and two-token example)",
        seeds("fig2", "fig2_uncapped", "fig3", "fig9"),
        seeds("fig3_cond1"),
        seeds("fig8", "gd_vs_ngd"),
    ),
    quote(FINDINGS, "reads: " + SUMMARY + " The {} not measured", *SUMMARY_SOURCES, summary(3)),
    # an optional target's numbers: "not built here" where results/fig6_mnist5k is absent
    quote(
        FINDINGS,
        "3 seeds, {} steps;",
        computed(
            "fig6_mnist5k: the last logged step",
            lambda b: float(b.metrics("fig6_mnist5k")["iteration"].max()),
            MNIST5K,
        ),
    ),
    quote(
        FINDINGS,
        "SPS ends {} below SGD on every seed (ratio {}) but is not ahead at {} of the logged "
        "points (undecided); SGD ends below SNGD (ratio {}) but not before step {} (undecided); "
        "Adam's final loss is within a factor {} of SGD's",
        computed(
            "fig6_mnist5k: 1 - SPS / SGD final train loss, the least seed",
            lambda b: 1 - float(b.row("fig6_mnist5k sps faster than sgd")["high"]),
            MNIST5K,
        ),
        row("fig6_mnist5k sps faster than sgd", target=MNIST5K),
        behind("fig6_mnist5k", "sps", "sgd", "train_loss", target=MNIST5K),
        row("fig6_mnist5k sgd faster than sngd", target=MNIST5K),
        last_behind("fig6_mnist5k", "sgd", "sngd", "train_loss", target=MNIST5K),
        row("fig6_mnist5k adam like sgd", target=MNIST5K),
    ),
    quote(
        FINDINGS,
        "`notation.md`: ρ = {} ≤ 0.5, non-optimal score spread {})",
        computed(
            "the largest Ass. 1 rho of fig2's, fig2_uncapped's and gd_vs_ngd's data",
            lambda b: max(
                hypothesis(e, "ass1_rho", _max).read(b)
                for e in ("fig2", "fig2_uncapped", "gd_vs_ngd")
            ),
        ),
        computed(
            "the largest non-optimal score spread of fig2's, fig2_uncapped's, gd_vs_ngd's data",
            lambda b: max(
                hypothesis(e, "ass2_spread", _max).read(b)
                for e in ("fig2", "fig2_uncapped", "gd_vs_ngd")
            ),
        ),
    ),
    quote(
        FINDINGS,
        "(opt/non-opt squared norm ratio {}, d = nT)",
        hypothesis("fig3", "cond1_opt_norm_ratio", _min),
    ),
    quote(
        FINDINGS,
        "(noise patches score up to {} apart)",
        hypothesis("fig9", "ass2_spread", _max),
    ),
    Fact(
        FINDINGS,
        '("GD still globally converges") is about that run, and holds.',
        outcome("fig8 gd global", "holds"),
    ),
    # fig2_uncapped
    quote(
        FINDINGS,
        "1 − cos(W_t, W_mm) is {} for NGD, {} for PS and {} for NGD-mom; GD is at {}. The exact "
        "first crossings (every step checked) of 1e-2: PS at t = {}, NGD-mom {}, NGD {}, GD {}; "
        "of 1e-3: PS {}, NGD-mom {}, NGD {}, GD not by 10⁴.",
        final("fig2_uncapped", "ngd"),
        final("fig2_uncapped", "ps"),
        final("fig2_uncapped", "ngd-mom"),
        final("fig2_uncapped", "gd"),
        *(first("fig2_uncapped", o, 1e-2) for o in ("ps", "ngd-mom", "ngd", "gd")),
        *(first("fig2_uncapped", o, 1e-3) for o in ("ps", "ngd-mom", "ngd")),
    ),
    Fact(FINDINGS, "1e-3: PS", never("fig2_uncapped", "gd", 1e-3)),
    # fig2, capped
    quote(
        FINDINGS,
        "PS's cap binds by t = {}, after which PS is GD with step 1e150: it crosses 1e-2 first "
        "(t = {}), then slows to a GD-like slope and ends at {}.",
        step_reaches("fig2", "ps"),
        first("fig2", "ps", 1e-2),
        final("fig2", "ps"),
    ),
    quote(
        FINDINGS,
        "(its adaptive step reaches {}), so NGD tracks Thm. 1 as uncapped ({} at 10⁴); "
        "NGD-mom's binds near t = {} and it ends at {}.",
        series("fig2", "ngd", "log_step_W", lambda v: np.exp(v.max()), "largest step, per seed"),
        final("fig2", "ngd"),
        step_reaches("fig2", "ngd-mom"),
        final("fig2", "ngd-mom"),
    ),
    Fact(
        FINDINGS,
        "NGD's cap never binds within 10⁴ steps",
        computed(
            "fig2 ngd: the step never reaches its cap",
            lambda b: bool(np.all(np.isnan(step_reaches("fig2", "ngd").read(b)))),
        ),
    ),
    Fact(
        FINDINGS,
        "On every seed each capped method is below GD at every logged t ≥ 100.",
        every(*(below_throughout("fig2", o, "gd") for o in ("ngd", "ngd-mom", "ps"))),
    ),
    quote(
        FINDINGS,
        "With the earlier cap 1e10 for all three, NGD's bound at t ≈ {}",
        computed(
            "fig2 ngd: first t at which the step reaches 1e10, latest seed",
            lambda b: np.max(step_reaches("fig2", "ngd", 1e10).read(b)),
        ),
    ),
    # norms
    quote(
        FINDINGS,
        "‖W_t‖ = 0.1 t (slope {} against t over [10³, 10⁴]",
        row("fig2_uncapped ngd norm slope"),
    ),
    quote(
        FINDINGS,
        "a + b ln t fits ‖W_t‖ over [300, 3·10⁴] with R² {} and beats a power law by ΔAIC = {}.",
        row("gd_vs_ngd gd norm log growth", "r2"),
        row("gd_vs_ngd gd norm log growth", "low"),
    ),
    quote(
        FINDINGS,
        "a + b ln t also wins (R² {}, ΔAIC {}, power law R² {}), although the log-log slope "
        "over [10², 10⁴], the old test, was {} on one seed.",
        row("fig2 gd norm log growth", "r2"),
        row("fig2 gd norm log growth"),
        said("fig2 gd norm log growth", "R^2 of the power law", "quantity"),
        slope_loglog("fig2", "gd", "W_norm", 1e2, 1e4),
    ),
    # Lem. 1
    quote(
        FINDINGS,
        "ln(1 − s̄_opt) falls linearly in t at {} on average, where −lr/‖W_mm‖ predicts the same "
        "to {}. At 10⁴ it is {} for NGD, {} for NGD-mom and {} for PS.",
        row("fig2_uncapped ngd softmax rate", "mean"),
        computed(
            "fig2_uncapped ngd softmax rate: |measured / predicted - 1| of the seed mean",
            lambda b: abs(float(b.row("fig2_uncapped ngd softmax rate")["ratio"]) - 1),
        ),
        *(final("fig2_uncapped", o, "log1m_opt_softmax") for o in ("ngd", "ngd-mom", "ps")),
    ),
    Fact(
        FINDINGS,
        "The optimal token's softmax never decreases under uncapped NGD or PS (Lem. 3).",
        every(*(outcome(f"fig2_uncapped {o} softmax monotone", "holds") for o in ("ngd", "ps"))),
    ),
    # Thm. 1
    quote(
        FINDINGS,
        "NGD's slope of log(1 − cos) against log t over [10³, 10⁴] is {}: consistent",
        row("fig2_uncapped ngd rate bound"),
    ),
    Fact(
        FINDINGS,
        'the alignment is "closely predicted by Thm. 1" does not hold',
        outcome("fig2_uncapped ngd rate closeness", "does not hold"),
    ),
    quote(
        FINDINGS,
        "measured rate is {} times the bound's (our tolerance ±25%)",
        row("fig2_uncapped ngd rate closeness"),
    ),
    # Fig. 2's remarks
    quote(
        FINDINGS,
        '(NGD / GD at 10⁴: {}); capped NGD-mom below NGD throughout ("a performance boost"; '
        "ratio {} at 10⁴).",
        ratio("fig2", "ngd", "gd"),
        row("fig2 ngd-mom ahead of ngd"),
    ),
    Fact(
        FINDINGS,
        "NGD below GD at every logged t ≥ 100 on every seed",
        below_throughout("fig2", "ngd", "gd"),
    ),
    quote(
        FINDINGS,
        "capped PS is first to 1e-2 (t = {}, NGD-mom {}) and below NGD at every logged "
        "t ≥ 100 on every seed (PS / NGD {} at 10⁴",
        first("fig2", "ps", 1e-2),
        first("fig2", "ngd-mom", 1e-2),
        row("fig2 ps ahead of ngd"),
    ),
    Fact(
        FINDINGS,
        "and below NGD at every logged t ≥ 100 on every seed",
        below_throughout("fig2", "ps", "ngd"),
    ),
    Fact(
        FINDINGS,
        "uncapped PS (fig2_uncapped) is ahead of NGD throughout",
        outcome("fig2_uncapped ps ahead of ngd", "holds"),
    ),
    # fig8
    quote(
        FINDINGS,
        "W_0 (norm {}) has a negative cosine with W_mm (1 − cos = {})",
        at("fig8", "gd", "W_norm", 0),
        at("fig8", "gd", "gap_W", 0),
    ),
    quote(
        FINDINGS,
        "Under GD, sample 1's optimal-token softmax starts at {} (below 1/T = 0.5), falls to {} "
        "at t = {} (NGD: {} at t = {}), then rises to {} at 10⁴; sample 2's rises from {} to {}. "
        "1 − cos(W_t, W_mm) ends at {} (NGD: {}), still decreasing.",
        _opt_softmax("gd", 0, "first logged value", lambda v: v.iloc[0].to_numpy()),
        _opt_softmax("gd", 0, "lowest value", lambda v: v.min().to_numpy()),
        _opt_softmax("gd", 0, "t of the lowest value", lambda v: v.idxmin().to_numpy()),
        _opt_softmax("ngd", 0, "lowest value", lambda v: v.min().to_numpy()),
        _opt_softmax("ngd", 0, "t of the lowest value", lambda v: v.idxmin().to_numpy()),
        _opt_softmax("gd", 0, "last value", lambda v: v.iloc[-1].to_numpy()),
        _opt_softmax("gd", 1, "first logged value", lambda v: v.iloc[0].to_numpy()),
        _opt_softmax("gd", 1, "last value", lambda v: v.iloc[-1].to_numpy()),
        final("fig8", "gd"),
        final("fig8", "ngd"),
    ),
    # the two-token example
    quote(
        FINDINGS,
        "GD's slope of log(1 − cos) against log log t is {} (predicted −2: 1/log² t); NGD's "
        "against log t is {} (predicted −2).",
        row("gd_vs_ngd two token gd rate", "mean"),
        row("gd_vs_ngd two token ngd rate", "mean"),
    ),
    # fig9
    quote(
        FINDINGS,
        "at 10⁴, 1 − cos(W_t, W_mm) is {} for NGD and {} for GD; NGD passes 1e-2 at t = {} and "
        "1e-3 at t = {}, GD not 1e-3 by 10⁴.",
        final("fig9", "ngd"),
        final("fig9", "gd"),
        first("fig9", "ngd", 1e-2),
        first("fig9", "ngd", 1e-3),
    ),
    Fact(FINDINGS, "GD not 1e-3 by 10⁴", never("fig9", "gd", 1e-3)),
    quote(
        FINDINGS,
        "the optimal softmax does dip (by {}) under NGD: the Lem. 3 row does not hold",
        row("fig9 ngd softmax monotone"),
    ),
    Fact(
        FINDINGS,
        "the Lem. 3 row does not hold, outside its hypotheses",
        outcome("fig9 ngd softmax monotone", "does not hold"),
    ),
    # fig3
    quote(
        FINDINGS,
        "Lem. 11's induction, which needs every sample a u-SVM support vector: on fig3's data "
        "({} are)",
        support_vectors("fig3"),
    ),
    quote(
        FINDINGS,
        "GD is the slowest in W, u and the loss: 1 − cos(W) {}, 1 − cos(u) {}, ln L ≈ {}.",
        final("fig3", "gd"),
        final("fig3", "gd", "gap_u"),
        final("fig3", "gd", "log_loss"),
    ),
    Fact(
        FINDINGS,
        "Every other optimizer is below GD in 1 − cos(W_t, W_mm) at every logged t ≥ 100 on "
        "every seed",
        every(
            *(
                outcome(f"fig3 ahead of gd {o} gap_W", "holds")
                for o in ("ngd", "ps", "joint-ngd", "eq10")
            )
        ),
    ),
    quote(
        FINDINGS,
        "Eq. 10: 1 − cos(W) {}, 1 − cos(u) {}, ln L {} at 10⁴. Thm. 2: −ln L grows like t^k "
        "with k = {} (R² {}),",
        final("fig3", "eq10"),
        final("fig3", "eq10", "gap_u"),
        final("fig3", "eq10", "log_loss"),
        row("fig3 eq10 loss rate"),
        row("fig3 eq10 loss rate", "r2"),
    ),
    Fact(
        FINDINGS,
        "and ln L is below GD's at every logged t ≥ 100",
        outcome("fig3 ahead of gd eq10 log_loss", "holds"),
    ),
    quote(
        FINDINGS,
        "Thm. 4: u attains {} of u_mm's margin (GD {}, which our 0.99 threshold fails, as a "
        "negative control) and 1 − cos(u_t, u_mm) < 1e-3 ({}: our threshold would flip if "
        "moved by a factor {}).",
        row("fig3 eq10 u margin"),
        row("fig3 gd u margin"),
        row("fig3 eq10 u direction"),
        said("fig3 eq10 u direction", "it flips if moved by a factor"),
    ),
    quote(
        FINDINGS,
        "Thm. 3 is undecided (a poor fit): the slope of ln(1 − cos(W_t, W_mm)) against ln ln t "
        "over [10³, 10⁴] is {} (1/log t would be −1) with R² down to {}, below our 0.9.",
        row("fig3 eq10 W rate bound"),
        row("fig3 eq10 W rate bound", "r2"),
    ),
    Fact(
        FINDINGS,
        "Thm. 3 is undecided (a poor fit)",
        outcome("fig3 eq10 W rate bound", "undecided"),
    ),
    quote(
        FINDINGS,
        "NGD leads in W: {}, ahead of joint NGD ({}) on every seed, by a factor {}: not "
        '"slightly", as the paper says (the row fails our threshold of a factor 2 by a '
        "factor {}). In u, NGD and joint NGD tie ({}, within {}; joint NGD ends ahead on {} of "
        '{} seeds, so "NGD faster in u" does not hold), and in the loss too (exponents k '
        "within {})",
        final("fig3", "ngd"),
        final("fig3", "joint-ngd"),
        row("fig3 ngd slightly ahead of joint-ngd"),
        said("fig3 ngd slightly ahead of joint-ngd", "it flips if moved by a factor"),
        gap_u_union("fig3", "ngd", "joint-ngd"),
        computed(
            "fig3: largest |NGD / joint NGD - 1| of 1 - cos(u_t, u_mm) at the last t",
            lambda b: np.max(np.abs(ratio("fig3", "ngd", "joint-ngd", "gap_u").read(b) - 1)),
        ),
        seeds_behind("fig3", "ngd", "joint-ngd", "gap_u"),
        seeds_behind("fig3", "ngd", "joint-ngd", "gap_u", of=True),
        computed(
            "fig3: largest |k(NGD) / k(joint NGD) - 1| of the loss exponents",
            lambda b: np.max(np.abs(row("fig3 ngd loss rate like joint-ngd").read(b) - 1)),
        ),
    ),
    Fact(
        FINDINGS,
        'so "NGD faster in u" does not hold',
        outcome("fig3 ngd ahead of joint-ngd gap_u", "does not hold"),
    ),
    quote(
        FINDINGS,
        '**PS is not the fastest** in W ({}), against the paper\'s "PS being the fastest": NGD '
        "is ahead of it at 10⁴ on {} of {} seeds (PS / NGD {}; PS below NGD at only {} of the "
        "logged points after t = 100), joint NGD on {} of {}. PS is fastest in u ({}) and the "
        "loss (ln L ≈ {}).",
        final("fig3", "ps"),
        seeds_behind("fig3", "ps", "ngd"),
        seeds_behind("fig3", "ps", "ngd", of=True),
        row("fig3 ps ahead of ngd"),
        computed(
            "fig3: share of logged points after the burn-in where PS is below NGD",
            lambda b: 1 - behind("fig3", "ps", "ngd").read(b),
        ),
        seeds_behind("fig3", "ps", "joint-ngd"),
        seeds_behind("fig3", "ps", "joint-ngd", of=True),
        final("fig3", "ps", "gap_u"),
        final("fig3", "ps", "log_loss"),
    ),
    quote(
        FINDINGS,
        "| joint Polyak on (W, u), f* = 0, uncapped (fig3) | {} ({} at 10³) | {} | {} | W's share "
        "of the step starves: ‖W‖ {} against ‖u‖ {} at t = 10³ |",
        final("fig3", "ps"),
        at("fig3", "ps", "gap_W", 1000),
        final("fig3", "ps", "gap_u"),
        final("fig3", "ps", "log_loss"),
        at("fig3", "ps", "W_norm", 1000),
        at("fig3", "ps", "u_norm", 1000),
    ),
    quote(
        FINDINGS,
        "The fig3 sweep (`results/fig3_sweep.pdf`) finds the same order in all {} settings",
        sweep_count("fig3", "ps_fastest_W", False),
    ),
    # Lem. 11
    quote(
        FINDINGS,
        "On fig3's data (n = 20, d = nT = 100) only {} of the samples are u-SVM support "
        "vectors, and ln(max_i l_i / min_i l_i) grows: by {} under Eq. 10 (to {} at most), {} "
        "under NGD;",
        support_vectors("fig3"),
        row("fig3 eq10 loss ratio"),
        said("fig3 eq10 loss ratio", "(late max", "quantity"),
        row("fig3 ngd loss ratio"),
    ),
    quote(
        FINDINGS,
        "fig3_cond1 (n = 5, d = 100, {} seeds, in the default build) judges Lem. 11 inside its "
        "hypotheses: the ratio holds (late maximum {} at most), as do the score gap and the "
        "monotone softmax; Thm. 2 (k = {}) and Thm. 4 hold;",
        seeds("fig3_cond1"),
        said("fig3_cond1 eq10 loss ratio", "(late max", "quantity"),
        row("fig3_cond1 eq10 loss rate"),
    ),
    Fact(
        FINDINGS,
        "as do the score gap and the monotone softmax; Thm. 2",
        every(
            *(
                outcome(f"fig3_cond1 eq10 {r}", "holds")
                for r in (
                    "loss ratio",
                    "score gap",
                    "softmax monotone",
                    "loss rate",
                    "u direction",
                    "u margin",
                )
            )
        ),  # fmt: skip
    ),
    quote(
        FINDINGS,
        "the W slope against ln ln t is {} (R² ≥ {}), slower than 1/log t, with "
        "1 − cos(W_t, W_mm) at {} at 10⁴. But ln ln t spans only {} over [10³, 10⁴]",
        row("fig3_cond1 eq10 W rate bound"),
        row("fig3_cond1 eq10 W rate bound", "r2"),
        final("fig3_cond1", "eq10"),
        said("fig3_cond1 eq10 W rate bound", "over a span of only"),
    ),
    quote(
        FINDINGS,
        "1/log t line drawn from the curve at t = {} (as the figures draw it), the slowest "
        "seed's trend has been above it since t = {}. Under our reading",
        said("fig3_cond1 eq10 W rate bound", "drawn from its curve at t ="),
        computed(
            "claims row 'fig3_cond1 eq10 W rate bound': since when the trend is above the line",
            lambda b: 10 ** said("fig3_cond1 eq10 W rate bound", "since t = 10^").read(b),
        ),
    ),
    Fact(
        FINDINGS,
        "Thm. 3 is **undecided, slower than the bound's rate**",
        outcome("fig3_cond1 eq10 W rate bound", "undecided"),
    ),
    # the sweeps: optional targets
    eta_cond1_table,
    Fact(
        FINDINGS,
        "Lem. 11 (iii) fails at η = 0.1 only",
        held_at("eta_cond1", ETA, "lem11_ratio_bounded", holds=False)(0.1),
    ),
    Fact(
        FINDINGS,
        "Thm. 3's slope reaches −1 at η = 0.1 and 0.3 on some seeds but not at the default",
        held_at("eta_cond1", ETA, "thm3_rate", some_seed=True)(0.1, 0.3),
    ),
    Fact(
        FINDINGS,
        "Thm. 4's u threshold and the race against GD hold at η = 1 only",
        every(
            held_at("eta_cond1", ETA, "thm4_u_direction")(1.0),
            held_at("eta_cond1", ETA, "eq10_below_gd_W")(1.0),
        ),
    ),
    quote(
        FINDINGS,
        "every sample is a support vector in {} of {} settings",
        sweep_count("cond1_regime", "every_sample_support", True),
        sweep_count("cond1_regime"),
    ),
    quote(
        FINDINGS,
        "Eq. 10's loss-ratio growth stays at most 1 in {} of {}: those {} and n = 10, d = 400 "
        "({}, one sample off the support on {} of {} seeds). Elsewhere it grows by {} (n = 20: "
        "{} at d = 100, {} at d = 800), while Eq. 10 stays below GD in 1 − cos(W_t, W_mm) at "
        "every logged t ≥ 100 in all {}.",
        sweep_count("cond1_regime", "lem11_ratio_bounded", True),
        sweep_count("cond1_regime"),
        sweep_count("cond1_regime", "every_sample_support", True),
        sweep_value(
            "cond1_regime", {"data.params.n": 10, "data.params.d": 400}, "loss_ratio_growth_eq10"
        ),
        sweep_value(
            "cond1_regime",
            {"data.params.n": 10, "data.params.d": 400},
            "failing_seeds",
            "every_sample_support",
        ),
        sweep_value("cond1_regime", {"data.params.n": 10, "data.params.d": 400}, "seeds"),
        sweep_value("cond1_regime", {"lem11_ratio_bounded": False}, "loss_ratio_growth_eq10"),
        sweep_value(
            "cond1_regime", {"data.params.n": 20, "data.params.d": 100}, "loss_ratio_growth_eq10"
        ),
        sweep_value(
            "cond1_regime", {"data.params.n": 20, "data.params.d": 800}, "loss_ratio_growth_eq10"
        ),
        sweep_count("cond1_regime", "eq10_below_gd_W", True),
    ),  # fmt: skip
    # beyond the paper: an optional target's rows
    Section(
        FINDINGS,
        geometry.START,
        geometry.END,
        Source(
            "the geometry section, from the claims table",
            lambda b: geometry.section(b.claims()),
            geometry.TARGET,
        ),
    ),
]

CLAIMS_DOC_ENTRIES = [
    Section(
        CLAIMS_DOC,
        failures.START,
        failures.END,
        Source(
            "the counted rows that do not hold or are undecided, from the claims table",
            lambda b: failures.section(b.claims()),
        ),
    ),
    Section(
        CLAIMS_DOC,
        fragile.START,
        fragile.END,
        Source(
            "the covered rows whose verdict flips inside a constant's plausible range",
            lambda b: fragile.section(b.claims()),
            fragile.TARGET,
        ),
    ),
]

ENTRIES = README_ENTRIES + FINDINGS_ENTRIES + CLAIMS_DOC_ENTRIES + regime.ENTRIES
