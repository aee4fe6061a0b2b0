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
# 2026-11-29, the 2-core VM (process CPU time, one thread), with every norm's fast solver
# (svm.dual_solves, svm.max_norm, svm.spectral_nuclear): d = 25 to 400 in one run (00:32 to
# 00:43 UTC, load 1 to 8); 600 and 800 again once the max-norm face probe had its own
# budget of 300 steps (03:48 to 03:52, load 7 to 12: the first run's 189 and 325 s there
# were its cvxpy fallback); 1000 and 1200 at 05:36 to 05:38 (load 1.2 to 1.5), no fallback
# logged. Before these solvers (2026-11-28, cvxpy for max, spectral, nuclear, l3): 4.9,
# 11.2, 16.2, 43.4 and 182.3 s for all five at d = 25 to 400 (docs/speed.md)
MEASURED = "2026-11-29, 2-core VM, one thread, CPU time"
PER_SEED = {
    "fro": {
        25: 0.001,
        50: 0.002,
        100: 0.002,
        200: 0.023,
        400: 0.114,
        600: 0.546,
        800: 0.073,
        1000: 1.472,
        1200: 0.166,
    },
    "max": {
        25: 0.037,
        50: 0.064,
        100: 0.126,
        200: 0.442,
        400: 2.091,
        600: 6.645,
        800: 13.336,
        1000: 21.627,
        1200: 31.465,
    },
    "spectral": {
        25: 2.742,
        50: 4.88,
        100: 7.761,
        200: 7.026,
        400: 7.4,
        600: 4.961,
        800: 5.104,
        1000: 10.111,
        1200: 10.792,
    },
    "nuclear": {
        25: 0.035,
        50: 0.033,
        100: 0.041,
        200: 0.074,
        400: 0.219,
        600: 0.528,
        800: 1.212,
        1000: 2.196,
        1200: 3.154,
    },
    "l3": {
        25: 0.011,
        50: 0.011,
        100: 0.025,
        200: 0.19,
        400: 1.298,
        600: 2.574,
        800: 4.358,
        1000: 7.353,
        1200: 10.296,
    },
}
ANNOUNCE_SECONDS = 60  # an svm_geometry job estimated longer says so before it starts
# the documented limit on d of an experiment with `norms` (docs/workflow.md): the largest
# measured d whose seed takes at most LIMIT_SECONDS in the five norms of config/config.yaml
# (the old limit's, 400, took 3.0 CPU-minutes with cvxpy). Every measured d does now: a
# seed takes 11 CPU-s at 400, 24 at 800 and 56 at 1200 (the max column, about d^2 from 800
# on, over half of it: its face probe 21 CPU-s at 1200), so the limit is the largest d
# measured, not a cost; moving it needs a measured d past 1200 (docs/speed.md)
LIMIT_SECONDS = 5 * 60
MAX_NORMS_D = 1200


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
