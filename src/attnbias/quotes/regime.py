"""docs/regime.md's numbers that a build measures: the data's hypotheses, the runs that
explain a constant we chose (fig2_uncapped's levels, Eq. 10's eta against GD), the seeds.
The page's other tables record the measurements we chose the caps by; the sweep fig2_caps
rebuilds them from the config (docs/studies.md)."""

from __future__ import annotations

import numpy as np

from attnbias.quotes.quote import Fact, quote
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


def geometric_means(experiment: str, optimizer: str, times: tuple[int, ...]):
    """The geometric mean over seeds of 1 - cos(W_t, W_mm) at each of `times`, one source
    each (at the first logged t >= it)."""

    def at_t(t: int):
        def read(b) -> float:
            values = b.series(experiment, optimizer, "gap_W")
            return float(np.exp(np.log(values[values.index >= t].iloc[0]).mean()))

        what = f"{experiment} {optimizer}: geometric mean over seeds of 1 - cos(W_t, W_mm), t={t}"
        return computed(what, read)

    return [at_t(t) for t in times]


def eta_race(metric: str, who: str):
    return robust_race("eq10_eta", 0.1, f"fig3 ahead of gd eq10 {metric}", who)


UNCAPPED = ("gd", "GD"), ("ngd", "NGD"), ("ps", "PS"), ("ngd-mom", "NGD-mom")
DECADES = (100, 1000, 10000)

ENTRIES = [
    Fact(
        REGIME,
        "Seeds: 10 for fig2, fig2_uncapped, fig3 and fig9, 5 for fig3_cond1, 1 for the "
        "deterministic fig8 and gd_vs_ngd",
        computed(
            "the seeds of the default build's experiments",
            lambda b: bool(np.all(seeds(*SEEDS).read(b) == list(SEEDS.values()))),
        ),
    ),
    quote(
        REGIME,
        "Ass.-1 ratio {} over its 10 seeds",
        hypothesis("fig2", "ass1_rho", _range),
    ),
    quote(
        REGIME,
        "NGD-mom's binds near t = {}, after which it stays near",
        step_reaches("fig2", "ngd-mom"),
    ),
    quote(
        REGIME,
        "The same cap on PS (second table, last capped row) binds by\nt = {}.",
        step_reaches("fig2", "ps"),
    ),
    quote(
        REGIME,
        "at t = 10², 10³, 10⁴): "
        + "; ".join(f"{name} {{}}, {{}}, {{}}" for _, name in UNCAPPED)
        + ".",
        *(
            s
            for optimizer, _ in UNCAPPED
            for s in geometric_means("fig2_uncapped", optimizer, DECADES)
        ),
    ),
    quote(
        REGIME,
        "(squared-norm ratio {} over its\n10 seeds)",
        hypothesis("fig3", "cond1_opt_norm_ratio", _range),
    ),
    quote(
        REGIME,
        "(1 − cos(W_t, W_mm) {} against GD's {}; 1 − cos(u_t, u_mm) {} against {}; ln L {} "
        "against {}), while η = 1 is ahead of GD in all three (W {}, u {}, ln L {}).",
        eta_race("gap_W", "Eq. 10"),
        final("fig3", "gd", "gap_W"),
        eta_race("gap_u", "Eq. 10"),
        final("fig3", "gd", "gap_u"),
        eta_race("log_loss", "Eq. 10"),
        final("fig3", "gd", "log_loss"),
        final("fig3", "eq10", "gap_W"),
        final("fig3", "eq10", "gap_u"),
        final("fig3", "eq10", "log_loss"),
    ),
    quote(
        REGIME,
        "but only {} of the samples are support vectors",
        hypothesis("fig3", "cond1_sv_fraction", _range),
    ),
]
