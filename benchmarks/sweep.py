"""A 1,000-run sweep from clean with `snakemake -c2`: wall time against the training time.

Issue 23's target: n = 20, T = 5, d = 100 (Example 1, fixed decoder), 10^4 iterations, GD
and NGD, 10 seeds x 50 points (NGD's lr) = 1,000 runs, in under 2 minutes of wall time and
within 2x of the training time summed over the runs (each point's job records its runs'
share of their batched training call, `train_s`). Both are printed, with their ratio.

Usage: python benchmarks/sweep.py [--points 50] [--seeds 10] [--iterations 10000]
(--points 5: the 100-run version, for a busy machine)
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
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]


def config(points: int, seeds: int, iterations: int) -> dict:
    lrs = [float(f"{lr:.3g}") for lr in np.geomspace(0.02, 0.5, points)]
    return {
        "results": "results",
        "device": "cpu",
        "experiments": {
            "bench": {
                "layout": "fixed_decoder",
                "seeds": seeds,
                "data": {"model": "example1", "params": {"n": 20, "T": 5, "d": 100}},
                "train": {"iterations": iterations, "log_points": 100},
                "optimizers": {
                    "gd": {"label": "GD", "rule": "gd", "lr": 1.0},
                    "ngd": {"label": "NGD", "rule": "ngd", "lr": 0.1},
                },
            }
        },
        "sweeps": {
            "bench": {
                "base": "bench",
                "grid": {"optimizers.ngd.lr": lrs},
                "metrics": ["final_log10_gap_W", "rate_W"],
                "claims": {
                    "ngd_ahead": {
                        "claim": "ahead",
                        "a": "ngd",
                        "b": "gd",
                        "metric": "final_log10_gap_W",
                    }
                },
            }
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for item in ("Snakefile", "workflow", "config", "profiles", "envs"):
            src = ROOT / item
            (shutil.copytree if src.is_dir() else shutil.copy)(src, Path(tmp) / item)
        path = Path(tmp) / "config" / "sweep_bench.yaml"
        path.write_text(yaml.safe_dump(config(args.points, args.seeds, args.iterations)))
        target = "results/sweeps/bench.pdf"  # before --configfile, which takes several files
        command = [sys.executable, "-m", "snakemake", target, "-c2", "--directory", tmp]
        command += ["--snakefile", str(Path(tmp) / "Snakefile"), "--configfile", str(path)]
        load = os.getloadavg()
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"the sweep failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        wall = time.perf_counter() - start
        runs = pd.read_csv(Path(tmp) / "results" / "sweeps" / "bench.csv")
    training = runs["train_s"].sum()
    print(
        f"sweep of {len(runs)} runs ({args.points} points x {args.seeds} seeds x GD, NGD; "
        f"n=20, T=5, d=100, {args.iterations} iterations) from clean, -c2: wall {wall:.1f} s "
        f"(goal < 120 s for 1,000 runs); training summed over runs {training:.1f} s; "
        f"wall / training {wall / training:.2f} (goal <= 2); load average before "
        f"{load[0]:.2f}, after {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
