"""One attention SVM per norm, our solver (attnbias.svm.norms: the m-dimensional duals of
svm.dual_solves, cvxpy where a norm has none) against the cvxpy + Clarabel reference on
the same problem, in the same run, at the sizes of fig2's data (Example 1) and of
geometry_dm's (DM), config/config.yaml's: n=20, T=5, d=100, m = n(T - 1) = 80 constraints
on d^2 = 10^4 entries. Each solve's answer passes the KKT check (svm.norms
.optimality_defect) and the two optimal values agree to 1e-6.

Goal: ours at least 20x faster for every norm but fro (already solved in its dual).
Prints one row per (size, W or u, norm): medians of the repeats, and the ratio; for the
max and spectral norms also their canonical point (svm.canonical: svm.max_norm,
svm.spectral_face) and face probe (svm.uniqueness: svm.max_norm; the spectral norm's point
test of svm.spectral_probe, cvxpy where the face is not a point), against cvxpy +
Clarabel, and for the spectral norm the probe on the exact face (svm.spectral_probe
.face_cosine, measured, not used: its cosine and time, or why it failed); for the max
u-SVM also where its time goes (the LP alone by the simplex with compiled and with numpy
pivots, by HiGHS and by the interior-point method it replaced, and the call around the LP
with the LP's answer given: the floor of any LP solver behind this call).

With --stored: instead, every SVM of built svm-geometry files (results/svm_geometry/*.npz,
solved by the solvers of their build) solved again from their data files
(results/data/<experiment>.npz) as the svm_geometry job solves it (svm.geometry), and
compared: the relative Frobenius distance of the solutions, the relative gap of the
values, whether the new one passes the KKT check, and the face cosines (for the max and
spectral norms also the new probe of the stored W*).

With --interleaved, ours and the reference are called alternately (each call after one of
the other: the caches a caller mixing solvers sees) instead of ours' repeats first.

Usage: python benchmarks/svm_norms.py [--repeats N (default 5)] [--reference-repeats N
       (default 3)] [--norms fro max spectral nuclear l3] [--svms W u (default both)]
       [--seed S (default 1)] [--clock wall|cpu (default wall)] [--interleaved]
       python benchmarks/svm_norms.py --stored results/svm_geometry/geometry_dm.npz ...
       [--stored-norms spectral nuclear]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import yaml

from attnbias.data import models
from attnbias.model.queries import queries_of
from attnbias.svm import (
    canonical,
    geometry,
    max_norm,
    max_simplex,
    norms,
    spectral_probe,
    uniqueness,
)
from attnbias.svm.dual_solves import DualSolveError
from attnbias.svm.norm_values import norm_value, parse_norm
from attnbias.workflow import npz

ROOT = Path(__file__).resolve().parents[1]
SIZES = {"fig2": "fig2", "DM": "geometry_dm"}  # label -> the config's experiment


def dataset(experiment: str, seed: int) -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    data = config["experiments"][experiment]["data"]
    return models.generate(data["model"], seed, data["params"])


CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCK["wall"]  # --clock cpu: process CPU time (fairer under load, one thread)


def median_time(solve, repeats: int) -> tuple[float, object]:
    times, found = [], None
    for _ in range(repeats):
        start = clock()
        found = solve()
        times.append(clock() - start)
    return statistics.median(times), found


def interleaved_times(first, second, repeats: int, second_repeats: int):
    """median_time's (time, answer) of `first` and of `second`, called alternately."""
    times, found = ([], []), [None, None]
    for i in range(max(repeats, second_repeats)):
        for j, (solve, count) in enumerate(((first, repeats), (second, second_repeats))):
            if i < count:
                start = clock()
                found[j] = solve()
                times[j].append(clock() - start)
    return [(statistics.median(t), f) for t, f in zip(times, found, strict=True)]


INTERLEAVED = False  # --interleaved


def compare(data: dict, what: str, norm: str, repeats: int, reference_repeats: int) -> str:
    X, opt = data["X"], data["opt"]
    y = data["y"] if what == "u" else None
    if what == "u":
        ours = lambda: norms.solve_u_svm_norm(X, y, opt, norm, name="benchmark")  # noqa: E731
    else:
        ours = lambda: norms.solve_w_svm_norm(X, opt, norm, name="benchmark")  # noqa: E731
    theirs = lambda: norms.solve_svm_norm_reference(X, opt, norm, y=y)  # noqa: E731
    if INTERLEAVED:
        (fast, found), (ref, reference) = interleaved_times(ours, theirs, repeats,
                                                            reference_repeats)  # fmt: skip
    else:
        fast, found = median_time(ours, repeats)
        ref, reference = median_time(theirs, reference_repeats)
    for s in (found, reference):
        defect = norms.optimality_defect(s, X, opt, norm, y=y)
        assert defect is None, defect
    gap = abs(found.value - reference.value) / reference.value
    assert gap < 1e-6, (what, norm, found.value, reference.value)
    return (
        f"| {what} | {norm} | {fast * 1e3:.3g} ms | {ref * 1e3:.3g} ms | {ref / fast:.0f}x "
        f"| {gap:.1e} |"
    )


def u_max_parts(data: dict, repeats: int) -> list[str]:
    """The max u-SVM's call split: its LP by svm.max_simplex with compiled pivots (the
    default) and with numpy's (the fallback), how many steps they take, the same LP by
    HiGHS (highspy's direct API, cvxpy's dependency: a library's simplex without cvxpy's
    layer) and by the interior-point method the simplex replaced, and everything else the
    call does (rows, checks, rescaling, the KKT certificate) with the LP's answer given."""
    X, y, opt = data["X"], data["y"], data["opt"]
    z = norms.u_rows(X, y, opt)
    tableau = max_simplex._start(z)
    steps = max_simplex._numpy_pivots(
        tableau, round(max_simplex.PIVOTS_PER_VARIABLE * tableau.A.shape[1])
    )
    compiled = max_simplex.compiled_pivots() is not None
    simplex, _ = median_time(lambda: max_simplex.simplex_svm(z, "c" if compiled else "numpy"),
                             repeats)  # fmt: skip
    in_numpy, _ = median_time(lambda: max_simplex.simplex_svm(z, "numpy"), repeats)
    highs, gamma = median_time(lambda: highs_lp(z), repeats)
    interior, _ = median_time(lambda: max_norm.svm(max_norm.DenseRows(z)), repeats)
    answer, solve = max_norm.u_svm(z), max_norm.u_svm
    max_norm.u_svm = lambda z: answer  # the LP's answer given: the call's floor
    try:
        floor, _ = median_time(lambda: norms.solve_u_svm_norm(X, y, opt, "max"), repeats)
    finally:
        max_norm.u_svm = solve
    gap = abs(gamma * np.abs(answer[0]).max() - 1.0)
    return [
        f"| u | max: its LP by the simplex, {'compiled' if compiled else 'NO COMPILER: numpy'} "
        f"pivots ({steps} steps) | {simplex * 1e3:.3f} ms | | | |",
        f"| u | max: its LP by the simplex, numpy pivots | {in_numpy * 1e3:.3f} ms | | | |",
        f"| u | max: its LP by HiGHS (highspy, dual simplex, no presolve) | {highs * 1e3:.3f} ms "
        f"| | | {gap:.1e} |",
        f"| u | max: its LP by the interior point | {interior * 1e3:.2f} ms | | | |",
        f"| u | max: the call, its LP's answer given | {floor * 1e3:.3f} ms | | | |",
    ]


HIGHS: dict = {}  # one HiGHS object, reused as a caller calling it thousands of times would


def highs_lp(z: np.ndarray) -> float:
    """gamma of max gamma s.t. z w >= gamma, |w| <= 1 by HiGHS (model passed, run, the
    solution read: what a caller would time; presolve off, which only slows this dense LP)."""
    import highspy

    m, d = z.shape
    highs = HIGHS.get("solver")
    if highs is None:
        highs = HIGHS["solver"] = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        highs.setOptionValue("presolve", "off")
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = d + 1, m
    lp.col_cost_ = np.r_[np.zeros(d), -1.0]
    lp.col_lower_, lp.col_upper_ = np.r_[-np.ones(d), -np.inf], np.r_[np.ones(d), np.inf]
    lp.row_lower_, lp.row_upper_ = np.zeros(m), np.full(m, np.inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.arange(0, m * (d + 1) + 1, m, dtype=np.int32)
    lp.a_matrix_.index_ = np.tile(np.arange(m, dtype=np.int32), d + 1)
    lp.a_matrix_.value_ = np.hstack([z, -np.ones((m, 1))]).T.ravel()
    highs.clearSolver()
    highs.passModel(lp)
    highs.run()
    solution = highs.getSolution()
    np.asarray(solution.row_dual)  # the multipliers, read as a caller would
    return float(np.asarray(solution.col_value)[d])


# the norms whose canonical point avoids cvxpy, and whose face probe does
FACE_NORMS, PROBE_NORMS = ("max", "spectral"), ("max", "spectral")


def compare_face(data: dict, norm: str, repeats: int, reference_repeats: int) -> list[str]:
    """The norm's canonical point (svm.canonical; svm.max_norm, svm.spectral_face) and, in
    PROBE_NORMS, face probe (svm.uniqueness; svm.max_norm) against cvxpy + Clarabel, each
    from the same W-SVM solution; each point passes the KKT check with the SVM's duals."""
    X, opt = data["X"], data["opt"]
    found = norms.solve_w_svm_norm(X, opt, norm, name="benchmark")
    timed = {}
    for fast, count in ((True, repeats), (False, reference_repeats)):
        timed[fast] = median_time(
            lambda fast=fast: canonical.least_norm_point(
                X, opt, norm, found.value, fast=fast, start=found.solution
            ),
            count,
        )
    W = {fast: canonical.checked_point(timed[fast][1], found, X, opt, parse_norm(norm),
                                        "benchmark", None) for fast in timed}  # fmt: skip
    distance = np.linalg.norm(W[True].solution - W[False].solution)
    lines = [
        f"| W canonical point | {norm} | {timed[True][0] * 1e3:.1f} ms | "
        f"{timed[False][0] * 1e3:.0f} ms | {timed[False][0] / timed[True][0]:.0f}x | distance "
        f"{distance / np.linalg.norm(W[False].solution):.1e} |"
    ]
    if norm not in PROBE_NORMS:
        return lines
    probes = {}
    for fast, count in ((True, repeats), (False, reference_repeats)):
        probes[fast] = median_time(
            lambda fast=fast: uniqueness.face_cosine(X, opt, norm, W[False].solution, fast=fast),
            count,
        )
    exact = ""
    if norm == "spectral":
        exact = "; on the exact face " + exact_face_probe(X, opt, W[False].solution, repeats)
    lines.append(
        f"| W face probe | {norm} | {probes[True][0] * 1e3:.1f} ms | "
        f"{probes[False][0] * 1e3:.0f} ms | {probes[False][0] / probes[True][0]:.0f}x | "
        f"cosines {probes[True][1]:.6f}, {probes[False][1]:.6f}{exact} |"
    )
    return lines


def exact_face_probe(X, opt, W_star, repeats: int) -> str:
    """svm.spectral_probe.face_cosine of W* (the exact face's probe): its cosine and time,
    or why it failed."""
    a, b = norms.w_rows(X, opt)
    bound = (1.0 + uniqueness.FACE_TOLERANCE) * norm_value(W_star, "spectral")
    try:
        took, cosine = median_time(lambda: spectral_probe.face_cosine(a, b, W_star, bound), repeats)
    except DualSolveError as why:
        return f"failed ({why})"
    return f"{cosine:.6f} in {took * 1e3:.0f} ms"


def compare_stored(path: Path, only: list[str] | None = None) -> None:
    """Each SVM of the svm-geometry file `path` against a new solve of its data (of the
    norms `only`, where given)."""
    stored = npz.load_seeds(path)
    data = npz.load_data(path.parent.parent / "data" / path.name)
    print(f"\n{path}")
    print("| seed | SVM | distance | value gap | new KKT residual | face cos stored, new |")
    print("|---|---|---|---|---|---|")
    for seed, arrays in stored.items():
        norm_names = sorted({k.split("_")[1] for k in arrays if k.startswith("W_")})
        norm_names = [n for n in norm_names if only is None or n in only]
        train_u = any(k.startswith("u_") for k in arrays)
        start = time.perf_counter()
        solutions, faces, _ = geometry.timed_solve(data[seed], norm_names, train_u, "compare")
        took = time.perf_counter() - start
        for key, s in solutions.items():
            norm, old = key.split("_", 1)[1], arrays[key]
            y = data[seed]["y"] if key.startswith("u_") else None
            defect = norms.optimality_defect(s, data[seed]["X"], data[seed]["opt"], norm, y=y)
            distance = np.linalg.norm(s.solution - old) / np.linalg.norm(old)
            gap = abs(s.value / norm_value(old, norm) - 1.0)
            face = (
                f"{float(arrays[f'{key}_face_cos']):.4g}, {faces[norm]:.4g}"
                if key.startswith("W_")
                else ""
            )
            if key in ("W_max", "W_spectral"):  # the new probe of the stored W*, alone
                Z = queries_of(data[seed])
                again = uniqueness.face_cosine(data[seed]["X"], data[seed]["opt"], norm, old, Z)
                face += f" (of the stored W*: {again:.4g})"
            residual = "fails" if defect else f"{s.optimality_residual:.1e}"
            print(f"| {seed} | {key} | {distance:.1e} | {gap:.1e} | {residual} | {face} |")
        print(f"| {seed} | all {len(solutions)}, with faces | {took:.1f} s | | | |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--reference-repeats", type=int, default=3)
    parser.add_argument("--norms", nargs="+", default=["fro", "max", "spectral", "nuclear", "l3"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stored", nargs="+", type=Path, default=[])
    parser.add_argument("--stored-norms", nargs="+", help="with --stored: only these norms")
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    parser.add_argument("--svms", nargs="+", choices=("W", "u"), default=["W", "u"])
    parser.add_argument("--interleaved", action="store_true")
    args = parser.parse_args()
    global clock, INTERLEAVED
    clock, INTERLEAVED = CLOCK[args.clock], args.interleaved
    print(f"{platform.processor() or platform.machine()}, load {os.getloadavg()[0]:.1f}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"{args.clock} time{', interleaved' if args.interleaved else ''}")  # fmt: skip
    for path in args.stored:
        compare_stored(path, args.stored_norms)
    if args.stored:
        return
    for label, experiment in SIZES.items():
        data = dataset(experiment, args.seed)
        n, T, d = data["X"].shape
        print(f"\n{label} ({experiment}, seed {args.seed}): n={n} T={T} d={d}, "
              f"m={n * (T - 1)}")  # fmt: skip
        print("| SVM | norm | ours | cvxpy + Clarabel | ratio | value gap |")
        print("|---|---|---|---|---|---|")
        for what in args.svms:
            for norm in args.norms:
                print(compare(data, what, norm, args.repeats, args.reference_repeats), flush=True)
        if "max" in args.norms and "u" in args.svms:
            print(*u_max_parts(data, args.repeats), sep="\n", flush=True)
        for norm in FACE_NORMS:
            if norm in args.norms and "W" in args.svms:
                print(*compare_face(data, norm, args.repeats, args.reference_repeats), sep="\n")


if __name__ == "__main__":
    main()
