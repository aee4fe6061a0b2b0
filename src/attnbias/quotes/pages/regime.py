"""docs/regime.md's registry: the numbers a build measures (the data's hypotheses, the runs
that explain a constant we chose: fig2_uncapped's levels, Eq. 10's eta against GD) and the
seeds, by marker name (attnbias.quotes.marks). The page's other tables record the
measurements we chose the caps by; the sweep fig2_caps rebuilds them from the config
(docs/studies.md)."""

from __future__ import annotations

import numpy as np

from attnbias.quotes import cap_tables
from attnbias.quotes.quote import Page, Section, Source
from attnbias.quotes.sources import (
    computed,
    final,
    hypothesis,
    robust_race,
    seeds,
    step_reaches,
)

REGIME = "docs/regime.md"
SEEDS = {"fig2": 10, "fig2_uncapped": 10, "fig3": 10, "fig9": 10, "fig3_cond1": 5}
SEEDS |= {"fig8": 1, "gd_vs_ngd": 1}  # deterministic: one seed


def _range(values: np.ndarray) -> np.ndarray:
    """Lowest and highest over seeds."""
    return np.array([values.min(), values.max()])


def geometric_mean(experiment: str, optimizer: str, t: float):
    """The geometric mean over seeds of 1 - cos(W_t, W_mm) at the first logged t >= `t`."""

    def read(b) -> float:
        values = b.series(experiment, optimizer, "gap_W")
        return float(np.exp(np.log(values[values.index >= t].iloc[0]).mean()))

    what = f"{experiment} {optimizer}: geometric mean over seeds of 1 - cos(W_t, W_mm), t={t:g}"
    return computed(what, read)


def eta_race(metric: str, who: str):
    return robust_race("eq10_eta", 0.1, f"fig3 ahead of gd eq10 {metric}", who)


NUMBERS = {
    "fig2.ass1_rho": hypothesis("fig2", "ass1_rho", _range),
    "fig2.ngd-mom.cap-binds": step_reaches("fig2", "ngd-mom"),
    "fig2.ps.cap-binds": step_reaches("fig2", "ps"),
    "fig2_uncapped.gd.geomean.1e2": geometric_mean("fig2_uncapped", "gd", 1e2),
    "fig2_uncapped.gd.geomean.1e3": geometric_mean("fig2_uncapped", "gd", 1e3),
    "fig2_uncapped.gd.geomean.1e4": geometric_mean("fig2_uncapped", "gd", 1e4),
    "fig2_uncapped.ngd.geomean.1e2": geometric_mean("fig2_uncapped", "ngd", 1e2),
    "fig2_uncapped.ngd.geomean.1e3": geometric_mean("fig2_uncapped", "ngd", 1e3),
    "fig2_uncapped.ngd.geomean.1e4": geometric_mean("fig2_uncapped", "ngd", 1e4),
    "fig2_uncapped.ps.geomean.1e2": geometric_mean("fig2_uncapped", "ps", 1e2),
    "fig2_uncapped.ps.geomean.1e3": geometric_mean("fig2_uncapped", "ps", 1e3),
    "fig2_uncapped.ps.geomean.1e4": geometric_mean("fig2_uncapped", "ps", 1e4),
    "fig2_uncapped.ngd-mom.geomean.1e2": geometric_mean("fig2_uncapped", "ngd-mom", 1e2),
    "fig2_uncapped.ngd-mom.geomean.1e3": geometric_mean("fig2_uncapped", "ngd-mom", 1e3),
    "fig2_uncapped.ngd-mom.geomean.1e4": geometric_mean("fig2_uncapped", "ngd-mom", 1e4),
    "fig3.cond1_opt_norm_ratio": hypothesis("fig3", "cond1_opt_norm_ratio", _range),
    "eq10_eta-0.1.eq10.final": eta_race("gap_W", "Eq. 10"),
    "fig3.gd.final": final("fig3", "gd", "gap_W"),
    "eq10_eta-0.1.eq10.final.gap_u": eta_race("gap_u", "Eq. 10"),
    "fig3.gd.final.gap_u": final("fig3", "gd", "gap_u"),
    "eq10_eta-0.1.eq10.final.log_loss": eta_race("log_loss", "Eq. 10"),
    "fig3.gd.final.log_loss": final("fig3", "gd", "log_loss"),
    "fig3.eq10.final": final("fig3", "eq10", "gap_W"),
    "fig3.eq10.final.gap_u": final("fig3", "eq10", "gap_u"),
    "fig3.eq10.final.log_loss": final("fig3", "eq10", "log_loss"),
    "fig3.cond1_sv_fraction": hypothesis("fig3", "cond1_sv_fraction", _range),
}

CAP_TABLES = Section(
    cap_tables.START,
    cap_tables.END,
    Source("fig2's cap tables, from fig2_uncapped's largest steps", cap_tables.section),
)

FACTS = {
    "seeds": computed(
        "the seeds of the default build's experiments",
        lambda b: bool(np.all(seeds(*SEEDS).read(b) == list(SEEDS.values()))),
    ),
}

PAGE = Page(REGIME, NUMBERS, FACTS, (CAP_TABLES,))
