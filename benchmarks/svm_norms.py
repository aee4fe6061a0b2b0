"""One attention SVM per norm, our solver (attnbias.svm.norms: the m-dimensional duals of
svm.dual_solves, cvxpy where a norm has none) against the cvxpy + Clarabel reference on
the same problem, in the same run, at the sizes of fig2's data (Example 1) and of
geometry_dm's (DM), config/config.yaml's: n=20, T=5, d=100, m = n(T - 1) = 80 constraints
on d^2 = 10^4 entries. Each solve's answer passes the KKT check (svm.norms
.optimality_defect) and the two optimal values agree to 1e-6.

Goal: ours at least 20x faster for every norm but fro (already solved in its dual).
Prints one row per (size, W or u, norm): medians of the repeats, and the ratio.

Usage: python benchmarks/svm_norms.py [--repeats N (default 5)] [--reference-repeats N
       (default 3)] [--norms fro max spectral nuclear l3] [--seed S (default 1)]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import yaml

from attnbias.data import models
from attnbias.svm import norms

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"fig2": "fig2", "DM": "geometry_dm"}  # label -> the config's experiment


def dataset(experiment: str, seed: int) -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    data = config["experiments"][experiment]["data"]
    return models.generate(data["model"], seed, data["params"])


def median_time(solve, repeats: int) -> tuple[float, object]:
    times, found = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        found = solve()
        times.append(time.perf_counter() - start)
    return statistics.median(times), found


def compare(data: dict, what: str, norm: str, repeats: int, reference_repeats: int) -> str:
    X, opt = data["X"], data["opt"]
    y = data["y"] if what == "u" else None
    if what == "u":
        ours = lambda: norms.solve_u_svm_norm(X, y, opt, norm, name="benchmark")  # noqa: E731
    else:
        ours = lambda: norms.solve_w_svm_norm(X, opt, norm, name="benchmark")  # noqa: E731
    fast, found = median_time(ours, repeats)
    ref, reference = median_time(
        lambda: norms.solve_svm_norm_reference(X, opt, norm, y=y), reference_repeats
    )
    for s in (found, reference):
        defect = norms.optimality_defect(s, X, opt, norm, y=y)
        assert defect is None, defect
    gap = abs(found.value - reference.value) / reference.value
    assert gap < 1e-6, (what, norm, found.value, reference.value)
    return (
        f"| {what} | {norm} | {fast * 1e3:.1f} ms | {ref * 1e3:.0f} ms | {ref / fast:.0f}x "
        f"| {gap:.1e} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reference-repeats", type=int, default=3)
    parser.add_argument("--norms", nargs="+", default=["fro", "max", "spectral", "nuclear", "l3"])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, load {os.getloadavg()[0]:.1f}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")  # fmt: skip
    for label, experiment in SIZES.items():
        data = dataset(experiment, args.seed)
        n, T, d = data["X"].shape
        print(f"\n{label} ({experiment}, seed {args.seed}): n={n} T={T} d={d}, "
              f"m={n * (T - 1)}")  # fmt: skip
        print("| SVM | norm | ours | cvxpy + Clarabel | ratio | value gap |")
        print("|---|---|---|---|---|---|")
        for what in ("W", "u"):
            for norm in args.norms:
                print(compare(data, what, norm, args.repeats, args.reference_repeats), flush=True)


if __name__ == "__main__":
    main()
