"""README.md's registry: the numbers its headlines ("What the default build shows") quote
from a build and the sentences the build decides, by marker name (attnbias.quotes.marks).
Most are docs/findings.md's too, read from its registry under the same names.
"""

from __future__ import annotations

from attnbias.quotes.pages import findings
from attnbias.quotes.quote import Page
from attnbias.quotes.sources import (
    below_throughout,
    every,
    outcome,
    row,
    step_reaches_latest,
)
from attnbias.quotes.sweeps import ETA, held_at, sweep_value

README = "README.md"

NUMBERS = {
    n: findings.NUMBERS[n]
    for n in (
        "summary.rows",
        "summary.measured",
        "summary.checkable",
        "summary.not-measured",
        "summary.hold",
        "summary.do-not-hold",
        "summary.undecided",
        "summary.comparisons",
        "summary.outside",
        "summary.consistency",
        "summary.kind.remark",
        "summary.kind.race",
        "summary.kind.threshold",
        "summary.kind.measurement",
        "summary.kind.checks.bound",
        "summary.kind.checks.data",
        "summary.kind.checks.asymptotic",
        "summary.kind.checks.tautology",
        "fig2_uncapped.ngd.final",
        "fig2_uncapped.ps.final",
        "fig2_uncapped.gd.final",
        "fig2_uncapped.ngd.first.1e-3",
        "fig2.ps.cap-binds",
        "fig2.ps.first.1e-2",
        "fig2_uncapped-ngd-rate-closeness",
        "gd_vs_ngd-gd-norm-log-growth.low",
        "gd_vs_ngd-two-token-gd-rate.mean",
        "gd_vs_ngd-two-token-ngd-rate.mean",
        "fig3-eq10-loss-rate",
        "fig3_cond1-eq10-W-rate-bound",
        "fig3_cond1-eq10-W-rate-bound.span",
        "fig3.support-vectors",
        "fig3-eq10-loss-ratio",
        "fig3-ngd-slightly-ahead-of-joint-ngd",
        "fig3.ngd-ahead-of-ps",
        "fig3.ngd-ahead-of-ps.seeds",
        "fig8.gd.softmax1.first",
        "fig8.gd.softmax1.lowest",
        "sweep.fig3.ps_fastest_W=False",
    )
} | {
    "fig2.ngd.step-reaches-1e15": step_reaches_latest("fig2", "ngd", 1e15),
    "fig3-eq10-u-margin.low": row("fig3 eq10 u margin", "low"),
    "fig3-gd-u-margin.mean": row("fig3 gd u margin", "mean"),
    "fig3_cond1-eq10-loss-ratio": row("fig3_cond1 eq10 loss ratio"),
    "sweep.eta_cond1.lr0.1.failing.lem11_ratio_bounded": sweep_value(
        "eta_cond1", {"optimizers.eq10.lr": 0.1}, "failing_seeds", "lem11_ratio_bounded"
    ),
    "sweep.eta_cond1.lr0.1.seeds": sweep_value("eta_cond1", {"optimizers.eq10.lr": 0.1}, "seeds"),
}

FACTS = {
    n: findings.FACTS[n]
    for n in (
        "fig2_uncapped.gd.never.1e-3",
        "fig2.ngd.cap-never-binds",
        "fig2_uncapped-ngd-rate-closeness.does-not-hold",
        "fig3-ahead-of-gd-eq10-log_loss.holds",
        "sweep.eta_cond1.thm3-reaches-at-0.1+0.3",
    )
} | {
    "fig2_uncapped.ngd+ps.below-gd": every(
        *(below_throughout("fig2_uncapped", o, "gd") for o in ("ngd", "ps"))
    ),
    "fig3_cond1.eq10.verdicts": every(
        outcome("fig3_cond1 eq10 loss rate", "holds"),
        outcome("fig3_cond1 eq10 u direction", "holds"),
        outcome("fig3_cond1 eq10 u margin", "holds"),
        outcome("fig3_cond1 eq10 loss ratio", "holds"),
        outcome("fig3_cond1 eq10 W rate bound", "undecided"),
    ),
    "sweep.eta_cond1.ahead-of-gd-at-1-only": held_at("eta_cond1", ETA, "eq10_below_gd_W")(1.0),
    "fig3.gd-slowest": every(
        *(
            outcome(f"fig3 ahead of gd {o} {m}", "holds")
            for o in ("ngd", "ps", "joint-ngd", "eq10")
            for m in ("gap_W", "log_loss")
        )
    ),
}

PAGE = Page(README, NUMBERS, FACTS)
