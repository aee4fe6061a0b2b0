"""CPU-seconds of one seed's SVMs under each norm against d: the table attnbias.svm.cost
reads (PER_SEED) to estimate a geometry experiment's svm_geometry job before it starts.

One DM dataset (fig3's and geometry_dm's n = 20, T = 5, so m = 80 constraints; seed 1) per
d; for each norm, the work the svm_geometry job does for it (attnbias.svm.geometry): the
W-SVM, its face's canonical point and face probe, and the u-SVM. Process CPU time, one
BLAS and solver thread, so that other work on the machine slows it less than it does wall
time. Prints a dict literal: paste it over PER_SEED (and MEASURED) in attnbias/svm/cost.py
to re-fit the estimate after the solvers change.

Usage: OMP_NUM_THREADS=1 python benchmarks/svm_cost.py [D ...]   (default: 25 50 100 200)
"""

from __future__ import annotations

import sys
import time

from attnbias.data import models
from attnbias.svm import norms
from attnbias.svm.canonical import canonical
from attnbias.svm.cost import MEASURED_N, MEASURED_T, TABLE_NORMS
from attnbias.svm.uniqueness import face_cosine


def seed_seconds(d: int) -> dict[str, float]:
    """{norm: CPU-seconds of its W-SVM, canonical point, face probe and u-SVM} at `d`."""
    params = {"n": MEASURED_N, "T": MEASURED_T, "d": d, "mu_norm": 1.0, "noise_scale": 0.5}
    data = models.generate("dm", 1, params)
    X, y, opt = data["X"], data["y"], data["opt"]
    out = {}
    for norm in TABLE_NORMS:
        start = time.process_time()
        found = norms.solve_w_svm_norm(X, opt, norm, name="cost")
        found = canonical(found, X, opt, norm, name="cost")
        face_cosine(X, opt, norm, found.solution, dual=found.dual)
        norms.solve_u_svm_norm(X, y, opt, norm, name="cost")
        out[norm] = round(time.process_time() - start, 3)
    return out


def main(sizes: list[int]) -> None:
    seed_seconds(8)  # warm-up: the solvers' first call pays their imports and setup
    table = {norm: {} for norm in TABLE_NORMS}
    for d in sizes:
        for norm, seconds in seed_seconds(d).items():
            table[norm][d] = seconds
        print(f"d = {d}: {dict((n, table[n][d]) for n in TABLE_NORMS)}", file=sys.stderr)
    print(table)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [25, 50, 100, 200])
