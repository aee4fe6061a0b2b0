"""Speed targets, measured in one run and printed as ratios (README records the figures).

  1. our W-SVM solver against cvxpy on the same problem (n=20, T=5, d=400): target >= 1000x
  2. 10 seeds trained in one batched run against one seed: target <= 3x the one-seed time
  3. wall time of the whole default CPU build from clean with -c2: target < 90 s with 10
     seeds (--configfile gives the config)
  4. wall time of the global-convergence study from clean with -c2: target < 40 s

The cost of one training step against its arithmetic floor: benchmarks/train_step.py.

Usage: python benchmarks/benchmark.py [--skip-cvxpy] [--skip-build] [--skip-study]
       [--only-builds] [--configfile FILE] [--iterations N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from attnbias.data import models
from attnbias.model import attention
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm import max_margin
from attnbias.training import loop, metrics
from attnbias.training.torch_loop import TorchStepper

ROOT = Path(__file__).resolve().parents[1]


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_svm(skip_cvxpy: bool) -> None:
    ds = models.generate("example1", 0, {"n": 20, "T": 5, "d": 400})
    ours = best_of(lambda: max_margin.solve_w_svm(ds["X"], ds["opt"]), 20)
    print(f"W-SVM n=20 T=5 d=400: ours {ours * 1e3:.2f} ms")
    if skip_cvxpy:
        return
    start = time.perf_counter()
    W_ref = max_margin.solve_w_svm_cvxpy(ds["X"], ds["opt"])
    ref = time.perf_counter() - start
    W = max_margin.solve_w_svm(ds["X"], ds["opt"]).W
    rel = np.linalg.norm(W - W_ref) / np.linalg.norm(W_ref)
    print(
        f"  cvxpy (primal, default solver) {ref:.1f} s; speed-up {ref / ours:,.0f}x "
        f"(target >= 1000x); relative difference {rel:.1e}"
    )


def bench_seeds(iterations: int) -> None:
    torch.set_num_threads(1)
    params = {"n": 20, "T": 5, "d": 100}
    datasets = [models.generate("example1", s, params) for s in range(10)]
    W_mm = np.stack([max_margin.solve_w_svm(d["X"], d["opt"]).W for d in datasets])
    spec = OptimizerSpec("ngd", lr=0.1)
    grid = metrics.log_grid(iterations, 100)

    def run(k):
        problem = attention.Problem.from_arrays(datasets[:k])
        loop.train(
            TorchStepper,
            problem,
            spec,
            iterations=iterations,
            log_iterations=grid,
            W_mm=torch.as_tensor(W_mm[:k]),
        )

    one = best_of(lambda: run(1), 3)
    ten = best_of(lambda: run(10), 3)
    print(
        f"NGD {iterations} iterations, n=20 T=5 d=100, 1 thread: one seed {one:.2f} s, "
        f"10 seeds batched {ten:.2f} s; ratio {ten / one:.2f}x (target <= 3x)"
    )


def bench_build(configfile: str | None, targets: list[str], label: str, goal: str) -> None:
    """Wall time of `snakemake -c2 [targets]` from clean, in a copy of the workflow."""
    with tempfile.TemporaryDirectory() as tmp:
        for item in ("Snakefile", "workflow", "config", "profiles", "envs"):
            src = ROOT / item
            (shutil.copytree if src.is_dir() else shutil.copy)(src, Path(tmp) / item)
        command = [sys.executable, "-m", "snakemake", "-c2", "-q", "--directory", tmp]
        command += ["--snakefile", str(Path(tmp) / "Snakefile")]
        if configfile:
            command += ["--configfile", str(Path(configfile).resolve())]
        load = os.getloadavg()
        start = time.perf_counter()
        subprocess.run([*command, *targets], check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        jobs = len(list(Path(tmp, "results", "benchmarks").rglob("*.tsv")))
    print(
        f"{label} from clean, -c2{' --configfile ' + configfile if configfile else ''}: "
        f"{wall:.1f} s ({goal}); {jobs} jobs with a benchmark file; load average before "
        f"{load[0]:.2f}, after {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-cvxpy", action="store_true", help="skip the slow cvxpy solve")
    parser.add_argument("--skip-build", action="store_true", help="skip the full build")
    parser.add_argument("--skip-study", action="store_true", help="skip the study's build")
    parser.add_argument("--only-builds", action="store_true", help="only the builds")
    parser.add_argument("--configfile", help="config of the default build (e.g. 10 seeds)")
    parser.add_argument("--iterations", type=int, default=2000)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads available")
    if not args.only_builds:
        bench_svm(args.skip_cvxpy)
        bench_seeds(args.iterations)
    if not args.skip_build:
        bench_build(args.configfile, [], "default CPU build", "target < 90 s")
    if not args.skip_study:
        bench_build(
            None, ["results/global_convergence.pdf"], "global-convergence study", "target < 40 s"
        )


if __name__ == "__main__":
    main()
