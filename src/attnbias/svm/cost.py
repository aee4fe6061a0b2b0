"""What an experiment's SVMs under other norms cost, estimated from measured costs: the
estimate a geometry build prints before its svm_geometry jobs start (Snakefile, onstart),
and the limit on d of an experiment with `norms` (configcheck_geometry).

PER_SEED holds the CPU-seconds of one seed's work for each norm (the W-SVM, its face's
canonical point and face probe, and the u-SVM: attnbias.svm.geometry) on DM's data at
n = 20, T = 5 (m = 80 constraints), by d, as `python benchmarks/svm_cost.py` prints them:
re-fit the estimate by running it and pasting its output here (the solvers will change).
Between measured sizes the estimate is linear in log-log; past the largest it grows with the
exponent of the last measured step, at least d^1; an entrywise l_p norm costs what l3
does; the cost is taken to grow in proportion to m above 80 and to stay as at 80 below it
(not measured: the table is at m = 80; the d^2 unknowns dominate the solvers' work).
A trained decoder's runs re-solve these SVMs in the train jobs for every new optimal-token
set they meet, which no estimate before the run can count; this is the svm_geometry job's.
"""

from __future__ import annotations

import math

MEASURED_N, MEASURED_T = 20, 5  # DM's sizes of the table (fig3's, geometry_dm's)
MEASURED_M = MEASURED_N * (MEASURED_T - 1)
TABLE_NORMS = ("fro", "max", "spectral", "nuclear", "l3")
# 2026-11-28, the 2-core VM under load 10 to 20 (process CPU time, one thread), before the
# solvers in the m-dimensional dual (issue 62)
MEASURED = "2026-11-28, 2-core VM, one thread, CPU time"
PER_SEED = {
    "fro": {25: 0.46, 50: 0.15, 100: 0.25, 200: 0.27, 400: 0.69},
    "max": {25: 1.31, 50: 4.22, 100: 5.30, 200: 26.01, 400: 131.88},
    "spectral": {25: 2.60, 50: 5.16, 100: 8.03, 200: 7.58, 400: 7.83},
    "nuclear": {25: 0.28, 50: 0.71, 100: 1.27, 200: 1.48, 400: 1.36},
    "l3": {25: 0.27, 50: 0.94, 100: 1.32, 200: 8.02, 400: 40.54},
}
ANNOUNCE_SECONDS = 60  # an svm_geometry job estimated longer says so before it starts
# the documented limit on d of an experiment with `norms` (docs/workflow.md): there, one
# seed's SVMs in the five norms of config/config.yaml took 3.0 CPU-minutes (about 11
# CPU-hours at 4096, the limit of every other experiment, by the estimate); docs/speed.md
MAX_NORMS_D = 400


def _table(norm: str) -> dict[int, float]:
    """The measured costs of `norm` (an entrywise l_p reads l3's), made non-decreasing in
    d (a smaller cost at a larger d is the noise of one instance, not a saving)."""
    key = "l3" if norm.startswith("l") else norm
    table, most = {}, 0.0
    for d, seconds in sorted(PER_SEED[key].items()):
        most = max(most, seconds)
        table[d] = most
    return table


def _m_factor(m: int) -> float:
    """The cost at m constraints over the table's (m = 80): in proportion above it; below
    it, as at 80 (the solvers' work there is mostly in the d^2 unknowns: an upper bound)."""
    return max(1.0, m / MEASURED_M)


def norm_seconds(norm: str, d: int, m: int = MEASURED_M) -> float:
    """Estimated CPU-seconds of one seed's SVMs in `norm` at dimension d, m constraints."""
    points = sorted(_table(norm).items())
    if d <= points[0][0]:
        return points[0][1] * _m_factor(m)
    above = next((p for p in points if p[0] > d), None)
    if above:  # between two measured sizes
        (d0, s0), (d1, s1) = [p for p in points if p[0] <= d][-1], above
        slope = math.log(s1 / s0) / math.log(d1 / d0)
    else:  # past the largest: from it, with the last step's exponent (at least 1)
        (d_, s_), (d0, s0) = points[-2:]
        slope = max(math.log(s0 / s_) / math.log(d0 / d_), 1.0)
    return s0 * (d / d0) ** slope * _m_factor(m)


def seed_seconds(norms: list[str], d: int, m: int = MEASURED_M) -> float:
    """Estimated CPU-seconds of one seed's SVMs in every norm of `norms`."""
    return sum(norm_seconds(norm, d, m) for norm in norms)


def sizes(experiment: dict) -> tuple[int, int, int]:
    """(n, T, d) of an experiment's data: its params, else its data model's defaults."""
    from attnbias.data import models

    data = experiment["data"]
    defaults = models.keyword_defaults(models.generator(data["model"]))
    params = {**defaults, **(data.get("params") or {})}
    return params["n"], params["T"], params["d"]


def experiment_seconds(experiment: dict) -> float:
    """Estimated CPU-seconds of an experiment's svm_geometry job (every seed)."""
    n, T, d = sizes(experiment)
    return experiment["seeds"] * seed_seconds(experiment["norms"], d, n * (T - 1))


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def announcement(name: str, experiment: dict) -> str | None:
    """The line a build prints before the svm_geometry job of experiment `name` starts,
    where its estimate is over ANNOUNCE_SECONDS; None where it is not."""
    seconds = experiment_seconds(experiment)
    if seconds <= ANNOUNCE_SECONDS:
        return None
    n, T, d = sizes(experiment)
    return (
        f"svm_geometry of experiment {name}: about {_duration(seconds)} of CPU time "
        f"({experiment['seeds']} seeds x the norms {experiment['norms']} at d = {d}, "
        f"n (T - 1) = {n * (T - 1)} constraints; estimated from the costs measured {MEASURED}, "
        "attnbias.svm.cost)"
    )
