"""What the content checksums (attnbias.workflow.io) cost a build, measured on its files.

Every .npz and Parquet file of a built results folder is hashed as its writer hashes it
(every entry of an .npz; a Parquet table's columns and metadata) and as each reader hashes
it again. The number of readers of each file is taken from the workflow's own plan: a dry
run with --forceall lists every job's inputs, and each job that takes a file as input is
counted as one full read (an upper bound: the figure jobs read only the hypotheses entry of
a data or svm file, and the claims job only the metadata of a run's table). The file's own
read (np.load, pq.read_table) is timed too, for scale.

  cost = sum over files of  hash time x (1 write + its readers)

Target: the checksums add under 1% to the default build's wall time (about 85 s idle).

Usage: python benchmarks/checksums.py [--results results] [--configfile config/config.yaml]
       [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import timeit
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from attnbias.workflow import npz, parquet


def readers(configfile: str) -> Counter:
    """How many jobs of a full build take each file as input (Snakemake's dry run)."""
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--forceall", "--configfile", configfile],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    counts = Counter()
    for block in re.findall(r"^\s+input: (.*)$", out, re.M):
        counts.update(path.strip() for path in block.split(","))
    return counts


def _best(fn, repeats: int) -> float:
    """The fastest of `repeats` calls, in seconds."""
    return min(timeit.repeat(fn, number=1, repeat=repeats))


def _npz(path: Path, repeats: int) -> tuple[float, float]:
    def read():
        with np.load(path, allow_pickle=False) as f:
            return {key: f[key] for key in f.files}

    entries = read()
    entries.pop(npz.CHECKSUM_KEY, None)
    hashing = _best(lambda: [npz.array_sha256(v) for v in entries.values()], repeats)
    return hashing, _best(read, repeats)


def _parquet(path: Path, repeats: int) -> tuple[float, float]:
    table = pq.read_table(path)
    hashing = _best(lambda: parquet._table_sha256(table), repeats)
    return hashing, _best(lambda: pq.read_table(path), repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", default="results")
    parser.add_argument("--configfile", default="config/config.yaml")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    counts = readers(args.configfile)
    files = sorted(p for p in Path(args.results).rglob("*") if p.suffix in (".npz", ".parquet"))
    totals = Counter()
    for path in files:
        hashing, read = (_npz if path.suffix == ".npz" else _parquet)(path, args.repeats)
        n_readers = counts.get(str(path), 0)
        totals["files"] += 1
        totals["bytes"] += path.stat().st_size
        totals["hash_once_s"] += hashing
        totals["hash_build_s"] += hashing * (1 + n_readers)
        totals["read_once_s"] += read
        totals["reads"] += n_readers
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(
        f"{totals['files']} files, {totals['bytes'] / 2**20:.1f} MiB, read by "
        f"{totals['reads']} job inputs in a full build"
    )
    print(f"hashing every file once:        {totals['hash_once_s'] * 1e3:8.1f} ms")
    print(f"reading every file once:        {totals['read_once_s'] * 1e3:8.1f} ms (np.load, pq)")
    print(f"hashing in a full build (bound): {totals['hash_build_s'] * 1e3:7.1f} ms CPU")


if __name__ == "__main__":
    main()
