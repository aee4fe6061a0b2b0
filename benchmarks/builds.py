"""The default build from clean, a new commit (HEAD) against a base commit, back to back.

Both trees are exported with `git archive` into a temporary folder (the working tree is not
read: commit first), each builds the default config with `snakemake -c2` from clean, and the
script prints per build the wall time, the CPU-seconds of all its processes and the job
count, the machine's load before each, the ratio of the wall times (target: at most 0.25,
docs/speed.md), and then benchmarks/compare_builds.py on the two results folders (metrics equal
to 1e-12 relative; claims equal).

Usage: python benchmarks/builds.py [--base 57f2222] [--new HEAD] [--cores 2]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def export(commit: str, dest: Path) -> Path:
    dest.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def snakemake(tree: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    command = [sys.executable, "-m", "snakemake", *args]
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=True)


def build(tree: Path, cores: int) -> dict:
    """Plan, then build from clean: wall and CPU seconds (children's), jobs, load before."""
    jobs = int(re.search(r"^total\s+(\d+)$", snakemake(tree, "-n").stdout, re.M)[1])
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    snakemake(tree, f"-c{cores}", "-q")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "jobs": jobs, "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="57f2222")
    parser.add_argument("--new", default="HEAD")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"base": export(args.base, Path(tmp) / "base")}
        trees["new"] = export(args.new, Path(tmp) / "new")
        runs = {}
        for name, tree in trees.items():
            runs[name] = build(tree, args.cores)
            r = runs[name]
            print(
                f"{name} ({args.base if name == 'base' else args.new}): {r['wall']:.1f} s wall,"
                f" {r['cpu']:.1f} CPU-seconds, {r['jobs']} jobs (load {r['load']:.1f} before)",
                flush=True,
            )
        print(f"wall ratio new/base: {runs['new']['wall'] / runs['base']['wall']:.3f}")
        print(f"CPU ratio new/base: {runs['new']['cpu'] / runs['base']['cpu']:.3f}")
        results = [str(trees[name] / "results") for name in ("base", "new")]
        subprocess.run([sys.executable, str(REPO / "benchmarks/compare_builds.py"), *results])
        claims = [(trees[name] / "results/claims.csv").read_bytes() for name in trees]
        print("claims.csv byte-identical:", claims[0] == claims[1])


if __name__ == "__main__":
    main()
