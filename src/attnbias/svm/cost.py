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
# 2026-11-29, the 2-core VM under load 1 to 8 (process CPU time, one thread), with every
# norm's fast solver (svm.dual_solves, svm.max_norm, svm.spectral_nuclear); 25 to 800 in
# one run, 600 in a second (the first was stopped at 1600: its cvxpy fallback, below, had
# used 7.8 GB). At 600 and 800 the max-norm face probe's interior point did not converge
# and cvxpy solved it (logged): the max column's jump there is that fallback's cost.
# Before these solvers (2026-11-28, cvxpy for max, spectral, nuclear, l3): 4.9, 11.2,
# 16.2, 43.4 and 182.3 s for all five at d = 25 to 400 (docs/speed.md)
MEASURED = "2026-11-29, 2-core VM, one thread, CPU time"
PER_SEED = {
    "fro": {25: 0.001, 50: 0.002, 100: 0.002, 200: 0.023, 400: 0.114, 600: 0.532, 800: 0.339},
    "max": {25: 0.037, 50: 0.064, 100: 0.126, 200: 0.442, 400: 2.091, 600: 189.144, 800: 324.727},
    "spectral": {25: 2.742, 50: 4.88, 100: 7.761, 200: 7.026, 400: 7.4, 600: 11.129, 800: 8.492},
    "nuclear": {25: 0.035, 50: 0.033, 100: 0.041, 200: 0.074, 400: 0.219, 600: 0.585, 800: 1.211},
    "l3": {25: 0.011, 50: 0.011, 100: 0.025, 200: 0.19, 400: 1.298, 600: 2.803, 800: 4.66},
}
ANNOUNCE_SECONDS = 60  # an svm_geometry job estimated longer says so before it starts
# the documented limit on d of an experiment with `norms` (docs/workflow.md): the largest
# measured d whose seed costs about what one cost at the old limit (400, 3.0 CPU-minutes
# with cvxpy). Up to 400 a seed's SVMs in the five norms of config/config.yaml now take 11
# CPU-s (fro, max, nuclear, l3 growing as d^1.6 to d^2.8 from 200 to 400; spectral flat,
# its problem on the tokens' span); from 400 to 600 the max column grows as d^11, its face
# probe falling back to cvxpy (seeds 1 and 2), and one seed took 3.4 CPU-minutes at 600
# (seed 2: 3.3), 5.7 at 800; about 2 CPU-hours at 4096 by the estimate; docs/speed.md
MAX_NORMS_D = 600


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
