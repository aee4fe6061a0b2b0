"""docs/findings.md's registry: every number it quotes from a build and every sentence the
build decides, by the name of its marker on the page (attnbias.quotes.marks), and its
generated sections (the eta sweep's table, the geometry findings).

Numbers that the text says were measured outside the build (once, by hand) are not here;
nor are the config's constants (caps, steps, thresholds), which the config and its tests
hold.
"""

from __future__ import annotations

import numpy as np

from attnbias.quotes import geometry_findings as geometry
from attnbias.quotes.quote import Page, Section, Source
from attnbias.quotes.sources import (
    at,
    behind,
    below_throughout,
    cap_never_binds,
    computed,
    created,
    every,
    final,
    first,
    gap_u_union,
    hypothesis,
    never,
    opt_softmax,
    outcome,
    ratio,
    robust_cell,
    row,
    said,
    seeds,
    seeds_behind,
    series,
    slope_loglog,
    step_reaches,
    step_reaches_latest,
    summary,
    summary_kind,
    support_vectors,
)
from attnbias.quotes.sweeps import ETA, eta_cond1_table, held_at, sweep_count, sweep_value

FINDINGS = "docs/findings.md"
MNIST5K = "results/fig6_mnist5k.pdf"  # an optional target: "not built here" without it


NUMBERS = {
    "measured-on": created(),
    "seeds.fig2+fig2_uncapped+fig3+fig9": seeds("fig2", "fig2_uncapped", "fig3", "fig9"),
    "seeds.fig3_cond1": seeds("fig3_cond1"),
    "seeds.fig8+gd_vs_ngd": seeds("fig8", "gd_vs_ngd"),
    "summary.rows": summary(0),
    "summary.measured": summary(1),
    "summary.checkable": summary(2),
    "summary.not-measured": summary(3),
    "summary.hold": summary(4),
    "summary.do-not-hold": summary(5),
    "summary.undecided": summary(6),
    "summary.comparisons": summary(7),
    "summary.outside": summary(8),
    "summary.consistency": summary(9),
    "summary.kind.remark": summary_kind("remark"),
    "summary.kind.race": summary_kind("race"),
    "summary.kind.threshold": summary_kind("threshold"),
    "summary.kind.measurement": summary_kind("measurement"),
    "summary.kind.checks.bound": summary_kind("a bound whose constant was lost"),
    "summary.kind.checks.data": summary_kind("a data check"),
    "summary.kind.checks.asymptotic": summary_kind("an asymptotic statement without a rate"),
    "summary.kind.checks.tautology": summary_kind("a near-tautology"),
    "fig6_mnist5k.steps": computed(
        "fig6_mnist5k: the last logged step",
        lambda b: float(b.metrics("fig6_mnist5k")["iteration"].max()),
        MNIST5K,
    ),
    "fig6_mnist5k-sps-faster-than-sgd.p": said(
        "fig6_mnist5k sps faster than sgd", "one-sided p =", "value_text", MNIST5K
    ),
    "fig6_mnist5k-sgd-faster-than-sngd.p": said(
        "fig6_mnist5k sgd faster than sngd", "one-sided p =", "value_text", MNIST5K
    ),
    "fig6_mnist5k-adam-like-sgd": row("fig6_mnist5k adam like sgd", target=MNIST5K),
    "example1.ass1_rho": computed(
        "the largest Ass. 1 rho of fig2's, fig2_uncapped's and gd_vs_ngd's data",
        lambda b: max(
            hypothesis(e, "ass1_rho", np.max).read(b)
            for e in ("fig2", "fig2_uncapped", "gd_vs_ngd")
        ),
    ),
    "example1.ass2_spread": computed(
        "the largest non-optimal score spread of fig2's, fig2_uncapped's, gd_vs_ngd's data",
        lambda b: max(
            hypothesis(e, "ass2_spread", np.max).read(b)
            for e in ("fig2", "fig2_uncapped", "gd_vs_ngd")
        ),
    ),
    "fig3.cond1_opt_norm_ratio": hypothesis("fig3", "cond1_opt_norm_ratio", np.min),
    "fig9.ass2_spread": hypothesis("fig9", "ass2_spread", np.max),
    "fig2_uncapped.ngd.final": final("fig2_uncapped", "ngd"),
    "fig2_uncapped.ps.final": final("fig2_uncapped", "ps"),
    "fig2_uncapped.ngd-mom.final": final("fig2_uncapped", "ngd-mom"),
    "fig2_uncapped.gd.final": final("fig2_uncapped", "gd"),
    "fig2_uncapped.ps.first.1e-2": first("fig2_uncapped", "ps", 1e-2),
    "fig2_uncapped.ngd-mom.first.1e-2": first("fig2_uncapped", "ngd-mom", 1e-2),
    "fig2_uncapped.ngd.first.1e-2": first("fig2_uncapped", "ngd", 1e-2),
    "fig2_uncapped.gd.first.1e-2": first("fig2_uncapped", "gd", 1e-2),
    "fig2_uncapped.ps.first.1e-3": first("fig2_uncapped", "ps", 1e-3),
    "fig2_uncapped.ngd-mom.first.1e-3": first("fig2_uncapped", "ngd-mom", 1e-3),
    "fig2_uncapped.ngd.first.1e-3": first("fig2_uncapped", "ngd", 1e-3),
    "fig2.ps.cap-binds": step_reaches("fig2", "ps"),
    "fig2.ps.first.1e-2": first("fig2", "ps", 1e-2),
    "fig2.ps.final": final("fig2", "ps"),
    "fig2.ngd.largest-step": series(  # over every step, not only the logged ones
        "fig2", "ngd", "max_log_step_W", lambda v: np.exp(v.iloc[-1]), "largest step, per seed"
    ),
    "fig2.ngd.final": final("fig2", "ngd"),
    "fig2.ngd-mom.cap-binds": step_reaches("fig2", "ngd-mom"),
    "fig2.ngd-mom.final": final("fig2", "ngd-mom"),
    "fig2.ngd.step-reaches-1e10": step_reaches_latest("fig2", "ngd", 1e10),
    "fig2_uncapped-ngd-norm-slope": row("fig2_uncapped ngd norm slope"),
    "gd_vs_ngd-gd-norm-log-growth.r2": row("gd_vs_ngd gd norm log growth", "r2"),
    "gd_vs_ngd-gd-norm-log-growth.low": row("gd_vs_ngd gd norm log growth", "low"),
    "fig2-gd-norm-log-growth.r2": row("fig2 gd norm log growth", "r2"),
    "fig2-gd-norm-log-growth": row("fig2 gd norm log growth"),
    "fig2-gd-norm-log-growth.power-law-r2": said(
        "fig2 gd norm log growth", "R^2 of the power law", "quantity"
    ),
    "fig2.gd.W_norm.loglog-slope": slope_loglog("fig2", "gd", "W_norm", 1e2, 1e4),
    "fig2_uncapped-ngd-softmax-rate.mean": row("fig2_uncapped ngd softmax rate", "mean"),
    "fig2_uncapped-ngd-softmax-rate.error": computed(
        "fig2_uncapped ngd softmax rate: |measured / predicted - 1| of the seed mean",
        lambda b: abs(float(b.row("fig2_uncapped ngd softmax rate")["ratio"]) - 1),
    ),
    "fig2_uncapped.ngd.final.log1m_opt_softmax": final("fig2_uncapped", "ngd", "log1m_opt_softmax"),
    "fig2_uncapped.ngd-mom.final.log1m_opt_softmax": final(
        "fig2_uncapped", "ngd-mom", "log1m_opt_softmax"
    ),
    "fig2_uncapped.ps.final.log1m_opt_softmax": final("fig2_uncapped", "ps", "log1m_opt_softmax"),
    "fig2_uncapped-ngd-rate-bound": row("fig2_uncapped ngd rate bound"),
    "fig2_uncapped-ngd-rate-closeness": row("fig2_uncapped ngd rate closeness"),
    "fig2.ngd-over-gd": ratio("fig2", "ngd", "gd"),
    "fig2-ngd-mom-ahead-of-ngd": row("fig2 ngd-mom ahead of ngd"),
    "fig2.ngd-mom.first.1e-2": first("fig2", "ngd-mom", 1e-2),
    "fig2-ps-ahead-of-ngd": row("fig2 ps ahead of ngd"),
    "fig8.gd.W_norm.at.0": at("fig8", "gd", "W_norm", 0),
    "fig8.gd.gap_W.at.0": at("fig8", "gd", "gap_W", 0),
    "fig8.gd.softmax1.first": opt_softmax(
        "gd", 0, "first logged value", lambda v: v.iloc[0].to_numpy()
    ),
    "fig8.gd.softmax1.lowest": opt_softmax("gd", 0, "lowest value", lambda v: v.min().to_numpy()),
    "fig8.gd.softmax1.lowest-t": opt_softmax(
        "gd", 0, "t of the lowest value", lambda v: v.idxmin().to_numpy()
    ),
    "fig8.ngd.softmax1.lowest": opt_softmax("ngd", 0, "lowest value", lambda v: v.min().to_numpy()),
    "fig8.ngd.softmax1.lowest-t": opt_softmax(
        "ngd", 0, "t of the lowest value", lambda v: v.idxmin().to_numpy()
    ),
    "fig8.gd.softmax1.last": opt_softmax("gd", 0, "last value", lambda v: v.iloc[-1].to_numpy()),
    "fig8.gd.softmax2.first": opt_softmax(
        "gd", 1, "first logged value", lambda v: v.iloc[0].to_numpy()
    ),
    "fig8.gd.softmax2.last": opt_softmax("gd", 1, "last value", lambda v: v.iloc[-1].to_numpy()),
    "fig8.gd.final": final("fig8", "gd"),
    "fig8.ngd.final": final("fig8", "ngd"),
    "gd_vs_ngd-two-token-gd-rate.mean": row("gd_vs_ngd two token gd rate", "mean"),
    "gd_vs_ngd-two-token-ngd-rate.mean": row("gd_vs_ngd two token ngd rate", "mean"),
    "fig9.ngd.final": final("fig9", "ngd"),
    "fig9.gd.final": final("fig9", "gd"),
    "fig9.ngd.first.1e-2": first("fig9", "ngd", 1e-2),
    "fig9.ngd.first.1e-3": first("fig9", "ngd", 1e-3),
    "fig9-ngd-softmax-monotone": row("fig9 ngd softmax monotone"),
    "fig3.support-vectors": support_vectors("fig3"),
    "fig3.gd.final": final("fig3", "gd"),
    "fig3.gd.final.gap_u": final("fig3", "gd", "gap_u"),
    "fig3.gd.final.log_loss": final("fig3", "gd", "log_loss"),
    "fig3.eq10.final": final("fig3", "eq10"),
    "fig3.eq10.final.gap_u": final("fig3", "eq10", "gap_u"),
    "fig3.eq10.final.log_loss": final("fig3", "eq10", "log_loss"),
    "fig3-eq10-loss-rate": row("fig3 eq10 loss rate"),
    "fig3-eq10-loss-rate.r2": row("fig3 eq10 loss rate", "r2"),
    "fig3-eq10-u-margin": row("fig3 eq10 u margin"),
    "fig3-gd-u-margin": row("fig3 gd u margin"),
    "fig3-eq10-u-direction": row("fig3 eq10 u direction"),
    "fig3-eq10-u-direction.flip-factor": said(
        "fig3 eq10 u direction", "it flips if moved by a factor"
    ),
    "fig3-eq10-W-rate-bound": row("fig3 eq10 W rate bound"),
    "fig3-eq10-W-rate-bound.r2": row("fig3 eq10 W rate bound", "r2"),
    "fig3.ngd.final": final("fig3", "ngd"),
    "fig3.joint-ngd.final": final("fig3", "joint-ngd"),
    "fig3-ngd-slightly-ahead-of-joint-ngd": row("fig3 ngd slightly ahead of joint-ngd"),
    "fig3-ngd-slightly-ahead-of-joint-ngd.flip-factor": said(
        "fig3 ngd slightly ahead of joint-ngd", "it flips if moved by a factor"
    ),
    "fig3.ngd+joint-ngd.final.gap_u": gap_u_union("fig3", "ngd", "joint-ngd"),
    "fig3.ngd-joint-ngd.gap_u-tie": computed(
        "fig3: largest |NGD / joint NGD - 1| of 1 - cos(u_t, u_mm) at the last t",
        lambda b: np.max(np.abs(ratio("fig3", "ngd", "joint-ngd", "gap_u").read(b) - 1)),
    ),
    "fig3.joint-ngd-ahead-of-ngd.gap_u": seeds_behind("fig3", "ngd", "joint-ngd", "gap_u"),
    "fig3.joint-ngd-ahead-of-ngd.gap_u.seeds": seeds_behind(
        "fig3", "ngd", "joint-ngd", "gap_u", of=True
    ),
    "fig3.ngd-joint-ngd.k-tie": computed(
        "fig3: largest |k(NGD) / k(joint NGD) - 1| of the loss exponents",
        lambda b: np.max(np.abs(row("fig3 ngd loss rate like joint-ngd").read(b) - 1)),
    ),
    "fig3.ps.final": final("fig3", "ps"),
    "fig3.ngd-ahead-of-ps": seeds_behind("fig3", "ps", "ngd"),
    "fig3.ngd-ahead-of-ps.seeds": seeds_behind("fig3", "ps", "ngd", of=True),
    "fig3-ps-ahead-of-ngd": row("fig3 ps ahead of ngd"),
    "fig3.ps-below-ngd.share": computed(
        "fig3: share of logged points after the burn-in where PS is below NGD",
        lambda b: 1 - behind("fig3", "ps", "ngd").read(b),
    ),
    "fig3.joint-ngd-ahead-of-ps": seeds_behind("fig3", "ps", "joint-ngd"),
    "fig3.joint-ngd-ahead-of-ps.seeds": seeds_behind("fig3", "ps", "joint-ngd", of=True),
    "fig3.ps.final.gap_u": final("fig3", "ps", "gap_u"),
    "fig3.ps.final.log_loss": final("fig3", "ps", "log_loss"),
    "fig3.ps.gap_W.at.1000": at("fig3", "ps", "gap_W", 1000),
    "fig3.ps.W_norm.at.1000": at("fig3", "ps", "W_norm", 1000),
    "fig3.ps.u_norm.at.1000": at("fig3", "ps", "u_norm", 1000),
    "sweep.fig3.ps_fastest_W=False": sweep_count("fig3", "ps_fastest_W", False),
    "fig3-eq10-loss-ratio": row("fig3 eq10 loss ratio"),
    "fig3-eq10-loss-ratio.late-max": said("fig3 eq10 loss ratio", "(late max", "quantity"),
    "fig3-ngd-loss-ratio": row("fig3 ngd loss ratio"),
    "fig3_cond1-eq10-loss-ratio.late-max": said(
        "fig3_cond1 eq10 loss ratio", "(late max", "quantity"
    ),
    "fig3_cond1-eq10-loss-rate": row("fig3_cond1 eq10 loss rate"),
    "fig3_cond1-eq10-W-rate-bound": row("fig3_cond1 eq10 W rate bound"),
    "fig3_cond1-eq10-W-rate-bound.r2": row("fig3_cond1 eq10 W rate bound", "r2"),
    "fig3_cond1.eq10.final": final("fig3_cond1", "eq10"),
    "fig3_cond1-eq10-W-rate-bound.span": said(
        "fig3_cond1 eq10 W rate bound", "over a span of only"
    ),
    "fig3_cond1-eq10-W-rate-bound.line-from": said(
        "fig3_cond1 eq10 W rate bound", "drawn from its curve at t ="
    ),
    "fig3_cond1-eq10-W-rate-bound.above-since": computed(
        "claims row 'fig3_cond1 eq10 W rate bound': since when the trend is above the line",
        lambda b: 10 ** said("fig3_cond1 eq10 W rate bound", "since t = 10^").read(b),
    ),
    "sweep.cond1_regime.every_sample_support=True": sweep_count(
        "cond1_regime", "every_sample_support", True
    ),
    "sweep.cond1_regime.settings": sweep_count("cond1_regime"),
    "sweep.cond1_regime.lem11_ratio_bounded=True": sweep_count(
        "cond1_regime", "lem11_ratio_bounded", True
    ),
    "sweep.cond1_regime.n10-d400.loss_ratio_growth_eq10": sweep_value(
        "cond1_regime", {"data.params.n": 10, "data.params.d": 400}, "loss_ratio_growth_eq10"
    ),
    "sweep.cond1_regime.n10-d400.failing.every_sample_support": sweep_value(
        "cond1_regime",
        {"data.params.n": 10, "data.params.d": 400},
        "failing_seeds",
        "every_sample_support",
    ),
    "sweep.cond1_regime.n10-d400.seeds": sweep_value(
        "cond1_regime", {"data.params.n": 10, "data.params.d": 400}, "seeds"
    ),
    "sweep.cond1_regime.lem11_ratio_bounded=False.loss_ratio_growth_eq10": sweep_value(
        "cond1_regime", {"lem11_ratio_bounded": False}, "loss_ratio_growth_eq10"
    ),
    "sweep.cond1_regime.n20-d100.loss_ratio_growth_eq10": sweep_value(
        "cond1_regime", {"data.params.n": 20, "data.params.d": 100}, "loss_ratio_growth_eq10"
    ),
    "sweep.cond1_regime.n20-d800.loss_ratio_growth_eq10": sweep_value(
        "cond1_regime", {"data.params.n": 20, "data.params.d": 800}, "loss_ratio_growth_eq10"
    ),
    "sweep.cond1_regime.eq10_below_gd_W=True": sweep_count("cond1_regime", "eq10_below_gd_W", True),
}

PS_CAP, NGD_CAP = "PS's cap (eta_max)", "NGD's and NGD-mom's cap (max_step)"
FACTS = {
    # fig6_mnist5k's races and Adam's gap (claims.real), as the paragraph on it words them
    "fig6_mnist5k-sps-faster-than-sgd.undecided": outcome(
        "fig6_mnist5k sps faster than sgd", "undecided", target=MNIST5K
    ),
    "fig6_mnist5k-sgd-faster-than-sngd.undecided": outcome(
        "fig6_mnist5k sgd faster than sngd", "undecided", target=MNIST5K
    ),
    "fig6_mnist5k-adam-like-sgd.fails": outcome(
        "fig6_mnist5k adam like sgd", "does not hold", target=MNIST5K
    ),
    # fig2's caps, measured in the default build (claims_robustness_default)
    "fig2-ps-ahead-of-ngd.ps-cap-range": robust_cell(
        "fig2 ps ahead of ngd",
        f"holds for {PS_CAP} in [1e148, 1e308]; does not hold at 1e10 (10 of 10 seeds), "
        "1e50 (10 of 10 seeds), 1e100 (10 of 10 seeds)",
    ),
    "fig2-ps-ahead-of-ngd.ngd-cap-range": robust_cell(
        "fig2 ps ahead of ngd", f"holds for {NGD_CAP} in [1e10, 1e308]"
    ),
    "fig2-ngd-mom-ahead-of-ngd.ngd-cap-range": robust_cell(
        "fig2 ngd-mom ahead of ngd",
        f"holds for {NGD_CAP} in [1e148, 1e308]; does not hold at 1e10 (2 of 10 seeds), "
        "1e50 (3 of 10 seeds), 1e100 (4 of 10 seeds)",
    ),
    "fig2-ps-first-and-slows.ps-cap-range": every(
        *(
            robust_cell(k, f"holds for {PS_CAP} in [1e10, 1e308]")
            for k in ("fig2 ps fastest", "fig2 ps slows down")
        )
    ),
    "fig8-gd-global.holds": outcome("fig8 gd global", "holds"),
    "fig2_uncapped.gd.never.1e-3": never("fig2_uncapped", "gd", 1e-3),
    "fig2.ngd.cap-never-binds": cap_never_binds("fig2", "ngd"),
    "fig2.capped.below-gd": every(
        *(below_throughout("fig2", o, "gd") for o in ("ngd", "ngd-mom", "ps"))
    ),
    "fig2_uncapped.ngd+ps.softmax-monotone": every(
        *(outcome(f"fig2_uncapped {o} softmax monotone", "holds") for o in ("ngd", "ps"))
    ),
    "fig2_uncapped-ngd-rate-closeness.does-not-hold": outcome(
        "fig2_uncapped ngd rate closeness", "does not hold"
    ),
    "fig2.ngd.below-gd": below_throughout("fig2", "ngd", "gd"),
    "fig2.ps.below-ngd": below_throughout("fig2", "ps", "ngd"),
    "fig2_uncapped-ps-ahead-of-ngd.holds": outcome("fig2_uncapped ps ahead of ngd", "holds"),
    "fig9.gd.never.1e-3": never("fig9", "gd", 1e-3),
    "fig9-ngd-softmax-monotone.does-not-hold": outcome(
        "fig9 ngd softmax monotone", "does not hold"
    ),
    "fig3.others-below-gd": every(
        *(
            outcome(f"fig3 ahead of gd {o} gap_W", "holds")
            for o in ("ngd", "ps", "joint-ngd", "eq10")
        )
    ),
    "fig3-ahead-of-gd-eq10-log_loss.holds": outcome("fig3 ahead of gd eq10 log_loss", "holds"),
    "fig3-eq10-W-rate-bound.undecided": outcome("fig3 eq10 W rate bound", "undecided"),
    "fig3-ngd-ahead-of-joint-ngd-gap_u.does-not-hold": outcome(
        "fig3 ngd ahead of joint-ngd gap_u", "does not hold"
    ),
    "fig3_cond1.eq10.lem11-holds": every(
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
    ),
    "fig3_cond1-eq10-W-rate-bound.undecided": outcome("fig3_cond1 eq10 W rate bound", "undecided"),
    "sweep.eta_cond1.lem11-fails-at-0.1-only": held_at(
        "eta_cond1", ETA, "lem11_ratio_bounded", holds=False
    )(0.1),
    "sweep.eta_cond1.thm3-reaches-at-0.1+0.3": held_at(
        "eta_cond1", ETA, "thm3_rate", some_seed=True
    )(0.1, 0.3),
    "sweep.eta_cond1.thm4+race-at-1-only": every(
        held_at("eta_cond1", ETA, "thm4_u_direction")(1.0),
        held_at("eta_cond1", ETA, "eq10_below_gd_W")(1.0),
    ),
}

GEOMETRY = Section(
    geometry.START,
    geometry.END,
    Source(
        "the geometry section, from the claims table",
        lambda b: geometry.section(b.claims()),
        geometry.TARGET,
    ),
)

PAGE = Page(FINDINGS, NUMBERS, FACTS, (eta_cond1_table, GEOMETRY))
