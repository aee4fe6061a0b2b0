"""docs/geometry.md's registry: what its section "How robust" quotes from the robustness
target (results/claims_robustness.md, an optional target). As the claims table reads it:
the rows beyond the paper, those whose verdict depends on one of the geometry experiments'
constants, those fragile, and a row's numbers and outcome at our values. From the target's
points (attnbias.quotes.robustness_points): a row's outcome, range and seed counts at the
other values tried, and the CPU seconds of the constants' jobs. Where the build's claims
table was measured without those constants' points, they read "not built here".

Not here, as measured outside the build: the cost's day and load, the geometry runs' and
the paper's constants' CPU seconds (docs/speed.md, docs/claims.md), the audit's rise with
beta2 0.9 and eps near 0; nor the config's margin threshold (0.9)."""

from __future__ import annotations

import pandas as pd

from attnbias.claims import robustness
from attnbias.claims.write import beyond_rows
from attnbias.quotes.build import ROBUSTNESS, Build, Unbuilt
from attnbias.quotes.quote import Page, Source
from attnbias.quotes.robustness_points import (
    BENCHMARKS,
    config_constants,
    cpu_seconds,
    factor_either_side,
    fell_at_end,
    held,
    kept,
    largest_jobs,
    margin,
    measured,
    moved,
    seeds,
    trend,
)
from attnbias.quotes.sources import computed, every

GEOMETRY_DOC = "docs/geometry.md"


def beyond(b: Build) -> pd.DataFrame:
    """The claims table's rows beyond the paper, with their robustness cells measured on the
    geometry constants (the config's claims_robustness entries geometry_*); Unbuilt where
    the build lacks their points or the claims table was measured without them."""
    claims = b.claims()
    rows = claims[beyond_rows(claims)]
    constants = geometry_constants(b)
    if not constants or robustness.unmeasured(robustness.cells(rows)).any():
        raise Unbuilt(f"the geometry constants' robustness ({ROBUSTNESS})")
    for name in constants:
        b.path(f"claims_robustness/{name}.parquet")
    return rows


def ours_row(b: Build, key: str) -> pd.Series:
    """The row beyond the paper `key` of the claims table (ours)."""
    rows = beyond(b)
    if key not in rows.index:
        raise ValueError(f"the claims table has no row {key!r} beyond the paper")
    return rows.loc[key]


def ours(key: str, outcome: str) -> Source:
    """True where the row beyond the paper reads `outcome` in the claims table (ours)."""
    return computed(
        f"the claims row {key!r} reads {outcome}",
        lambda b: ours_row(b, key)["outcome"] == outcome,
        ROBUSTNESS,
    )


def ours_range(key: str) -> Source:
    """The row's measured range over seeds in the claims table (ours)."""
    return computed(
        f"the claims row {key!r}: low to high",
        lambda b: ours_row(b, key)[["low", "high"]].to_numpy(dtype=float),
        ROBUSTNESS,
    )


def ours_rising(key: str) -> Source:
    """True where the margin row's range at the last t lies wholly above its range a decade
    before, in the claims table (ours)."""
    return computed(
        f"the claims row {key!r}: its margin rising",
        lambda b: moved(str(ours_row(b, key)["value_text"]), rising=True),
        ROBUSTNESS,
    )


def ours_falling_at_end(key: str) -> Source:
    """True where the margin row's range at the last t lies wholly below its range at the
    previous logged t, in the claims table (ours): every seed fell at the horizon."""
    return computed(
        f"the claims row {key!r}: its margin falling over the last logged interval",
        lambda b: fell_at_end(str(ours_row(b, key)["value_text"])),
        ROBUSTNESS,
    )


def fragile(*keys: str) -> Source:
    """True where each row's verdict is fragile (the claims table's column fragile)."""
    return computed(
        f"the claims rows {list(keys)} are fragile",
        lambda b: all(ours_row(b, k)["fragile"] == True for k in keys),  # noqa: E712
        ROBUSTNESS,
    )


def geometry_constants(b: Build) -> list[str]:
    return [n for n in config_constants(b) if n.startswith("geometry_")]


def constants_run(count: int) -> Source:
    """True where the config names `count` geometry constants and each has its job's
    benchmark file."""

    def read(b: Build) -> bool:
        jobs = b.benchmarks(BENCHMARKS, "geometry_*")
        return len(geometry_constants(b)) == count and sorted(jobs.index) == sorted(
            geometry_constants(b)
        )

    return computed(f"the config's geometry constants, each with its job: {count}", read,
                    ROBUSTNESS)  # fmt: skip


EX1, DM = "geometry_example1", "geometry_dm"
FIRST, MARGIN = "own norm first", "own margin"
BETA2, EPS, ADAM_LR = "geometry_adam_beta2", "geometry_adam_eps", "geometry_adam_lr"
# the optimizers whose every row keeps its verdict over their step's range, and its constant
STEPS_KEPT = {o: f"geometry_{o.replace('-', '_')}_lr"
              for o in ("gd", "ngd", "sign", "nsd-l3")}  # fmt: skip
# spectral descent's and Muon's margins on DM flip at step 1 (the polar cut-off's rule)
SPECTRAL_STEPS = {o: f"geometry_{o}_lr" for o in ("spectral", "muon")}
HOLDS, FAILS, UNDECIDED = "holds", "does not hold", "undecided"


def key(experiment: str, optimizer: str, row: str) -> str:
    return f"{experiment} {optimizer} {row}"


EX1_FIRST, EX1_MARGIN = key(EX1, "adam", FIRST), key(EX1, "adam", MARGIN)
DM_FIRST, DM_MARGIN = key(DM, "adam", FIRST), key(DM, "adam", MARGIN)
NSD_MAX, MIRROR, KQ = key(DM, "nsd-max", MARGIN), key(DM, "mirror", MARGIN), key(EX1, "kq", MARGIN)

NUMBERS = {
    "robust.beyond-rows": computed(
        "the claims rows beyond the paper", lambda b: len(beyond(b)), ROBUSTNESS
    ),
    "robust.beyond-depend": computed(
        "the rows beyond the paper whose verdict depends on a constant (a robustness cell)",
        lambda b: int((robustness.cells(beyond(b)) != "").sum()),
        ROBUSTNESS,
    ),
    "robust.beyond-fragile": computed(
        "the rows beyond the paper whose verdict flips inside a constant's plausible range",
        lambda b: int((beyond(b)["fragile"] == True).sum()),  # noqa: E712 (NaN: not fragile)
        ROBUSTNESS,
    ),
    # Adam on Example 1
    "robust.ex1.adam.first.beta2.alone": seeds(BETA2, EX1_FIRST, 0.9, 0.99),
    "robust.ex1.adam.first.beta2.seeds": seeds(BETA2, EX1_FIRST, 0.9, 0.99, alone=False),
    "robust.ex1.adam.first.beta2.lead": measured(BETA2, EX1_FIRST, 0.9, 0.99),
    "robust.ex1.adam.first.lr.alone": seeds(ADAM_LR, EX1_FIRST, 0.03),
    "robust.ex1.adam.first.lr.seeds": seeds(ADAM_LR, EX1_FIRST, 0.03, alone=False),
    "robust.ex1.adam.margin.ours": ours_range(EX1_MARGIN),
    "robust.ex1.adam.margin.beta2": measured(BETA2, EX1_MARGIN, 0.9, 0.99),
    "robust.ex1.adam.margin.beta2.t-last": margin(BETA2, EX1_MARGIN, "t_last", 0.9, 0.99),
    "robust.ex1.adam.margin.beta2.early": margin(BETA2, EX1_MARGIN, "early", 0.9, 0.99),
    "robust.ex1.adam.margin.beta2.t-before": margin(BETA2, EX1_MARGIN, "t_before", 0.9, 0.99),
    "robust.ex1.adam.margin.eps-1e-12": measured(EPS, EX1_MARGIN, 1e-12),
    "robust.ex1.adam.margin.lr-0.003": measured(ADAM_LR, EX1_MARGIN, 0.003),
    # Adam on DM
    "robust.dm.adam.first.eps-1e-4.alone": seeds(EPS, DM_FIRST, 1e-4),
    "robust.dm.adam.first.eps-1e-4.seeds": seeds(EPS, DM_FIRST, 1e-4, alone=False),
    "robust.dm.adam.first.eps-1e-4.closer-by": measured(EPS, DM_FIRST, 1e-4, sign=-1),
    "robust.ex1.adam.first.eps-1e-4.closer-by": measured(EPS, EX1_FIRST, 1e-4, sign=-1),
    "robust.dm.adam.margin.ours": ours_range(DM_MARGIN),
    "robust.dm.adam.margin.lr-0.003": measured(ADAM_LR, DM_MARGIN, 0.003),
    # near the threshold
    "robust.dm.nsd-max.margin.lr-0.01.alone": seeds("geometry_nsd_max_lr", NSD_MAX, 0.01),
    "robust.dm.nsd-max.margin.lr-0.01.seeds": seeds(
        "geometry_nsd_max_lr", NSD_MAX, 0.01, alone=False
    ),
    "robust.dm.mirror.margin.lr-3+10": measured("geometry_mirror_lr", MIRROR, 3, 10),
    "robust.ex1.kq.margin.lr-3": measured("geometry_kq_lr", KQ, 3),
    "robust.ex1.kq.margin.lr-3.alone": seeds("geometry_kq_lr", KQ, 3),
    "robust.ex1.kq.margin.lr-3.seeds": seeds("geometry_kq_lr", KQ, 3, alone=False),
    # the cost
    "robust.cost.cpu-seconds": cpu_seconds("geometry_*"),
}

FACTS = {
    "robust.steps-kept": every(
        *(kept(c, optimizer=o) for o, c in STEPS_KEPT.items()),
        *(factor_either_side(c, 3) for c in STEPS_KEPT.values()),
    ),
    "robust.spectral+muon.kept-but-dm-margin": every(
        *(kept(c, optimizer=o, but=key(DM, o, MARGIN)) for o, c in SPECTRAL_STEPS.items()),
        *(
            held(c, key(DM, o, MARGIN), HOLDS, 0.1, 0.3, only=True)
            for o, c in SPECTRAL_STEPS.items()
        ),
    ),  # fmt: skip
    "robust.dm.kq.first.kept": kept("geometry_kq_lr", key(DM, "kq", FIRST), outcome=FAILS),
    "robust.dm.ngd+gd.margin.kept": every(
        kept("geometry_ngd_lr", key(DM, "ngd", MARGIN), outcome=FAILS),
        kept("geometry_gd_lr", key(DM, "gd", MARGIN), outcome=UNDECIDED),
    ),
    # Adam on Example 1
    "robust.ex1.adam.fragile": fragile(EX1_FIRST, EX1_MARGIN),
    "robust.ex1.adam.first.beta2": held(BETA2, EX1_FIRST, HOLDS, 0.999, only=True),
    "robust.ex1.adam.first.beta2.closer": held(BETA2, EX1_FIRST, FAILS, 0.9, 0.99),
    "robust.ex1.adam.first.eps": held(EPS, EX1_FIRST, HOLDS, 1e-12, 1e-8, only=True),
    "robust.ex1.adam.first.eps.not": held(EPS, EX1_FIRST, FAILS, 1e-6, 1e-4),
    "robust.ex1.adam.first.lr": held(ADAM_LR, EX1_FIRST, HOLDS, 0.003, 0.01, only=True),
    "robust.ex1.adam.first.lr.not": held(ADAM_LR, EX1_FIRST, FAILS, 0.03),
    "robust.ex1.adam.margin.ours.fails": ours(EX1_MARGIN, FAILS),
    "robust.ex1.adam.margin.ours.rising": ours_rising(EX1_MARGIN),
    "robust.ex1.adam.margin.ours.falls-at-end": ours_falling_at_end(EX1_MARGIN),
    "robust.ex1.adam.margin.beta2.fails": held(BETA2, EX1_MARGIN, FAILS, 0.9, 0.99),
    "robust.ex1.adam.margin.beta2.falling": trend(BETA2, EX1_MARGIN, 0.9, 0.99, rising=False),
    "robust.ex1.adam.margin.eps-1e-12.fails": held(EPS, EX1_MARGIN, FAILS, 1e-12),
    "robust.ex1.adam.margin.eps": held(EPS, EX1_MARGIN, FAILS, 1e-6, 1e-4),
    "robust.ex1.adam.margin.lr-0.03": held(ADAM_LR, EX1_MARGIN, FAILS, 0.03),
    "robust.ex1.adam.margin.lr-0.003.undecided": held(ADAM_LR, EX1_MARGIN, UNDECIDED, 0.003),
    "robust.ex1.adam.margin.lr-0.003.rising": trend(ADAM_LR, EX1_MARGIN, 0.003),
    "robust.ex1.adam.margin.beta2-0.9.no-rise": trend(BETA2, EX1_MARGIN, 0.9, rising=False),
    # Adam on DM
    "robust.dm.adam.first.eps": held(EPS, DM_FIRST, HOLDS, 1e-12, 1e-8, 1e-6, only=True),
    "robust.dm.adam.first.beta2+lr": every(
        kept(BETA2, DM_FIRST, outcome=HOLDS), kept(ADAM_LR, DM_FIRST, outcome=HOLDS)
    ),
    "robust.dm.adam.first.eps-1e-4": held(EPS, DM_FIRST, FAILS, 1e-4),
    "robust.dm.adam.margin.ours.fails": ours(DM_MARGIN, FAILS),
    "robust.dm.adam.margin.lr-0.003.undecided": held(ADAM_LR, DM_MARGIN, UNDECIDED, 0.003),
    "robust.dm.adam.margin.lr-0.003.rising": trend(ADAM_LR, DM_MARGIN, 0.003),
    "robust.dm.adam.margin.fragile": fragile(DM_MARGIN),
    # near the threshold
    "robust.dm.nsd-max.margin.lr": held(
        "geometry_nsd_max_lr", NSD_MAX, HOLDS, 0.03, 0.1, only=True
    ),
    "robust.dm.nsd-max.margin.lr-0.01": held("geometry_nsd_max_lr", NSD_MAX, UNDECIDED, 0.01),
    "robust.dm.mirror.margin.lr": held("geometry_mirror_lr", MIRROR, FAILS, 3, 10, only=True),
    "robust.dm.mirror.margin.lr-30": held("geometry_mirror_lr", MIRROR, UNDECIDED, 30),
    "robust.ex1.kq.margin.lr": held("geometry_kq_lr", KQ, HOLDS, 10, 30, only=True),
    "robust.ex1.kq.margin.lr-3.undecided": held("geometry_kq_lr", KQ, UNDECIDED, 3),
    # the cost
    "robust.cost.constants": constants_run(12),
    "robust.cost.largest": largest_jobs(
        "geometry_*", "geometry_sign_lr", "geometry_adam_lr", "geometry_adam_eps"
    ),
    "robust.cost.tokens-move": every(
        *(ours(key(DM, o, "optimal tokens kept"), FAILS) for o in ("sign", "adam"))
    ),
}

PAGE = Page(GEOMETRY_DOC, NUMBERS, FACTS)
