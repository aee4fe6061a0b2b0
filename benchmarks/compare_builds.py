"""Compare two builds' results: every aggregate table row by row, and the claims table.

Prints, per experiment, the rows only one build has and the largest relative difference per
metric; for the claims, any text or verdict that differs and the largest relative difference
of each numeric column. Used to check that the compiled kernel (attnbias.training.kernel) gives the
results of the torch implementation (README, "Speed").

Every experiment whose aggregate table both builds have is compared; one that only one build
has is named. Claims tables of different layouts (the claims code changed between the two
commits: rows or columns differ) are not compared, and the script says so: the aggregate
tables they are computed from are. Exits 1 where a metric differs by more than 1e-12
relative or a row is unmatched.

Usage: python benchmarks/compare_builds.py BASE/results NEW/results
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

TOLERANCE = 1e-12
base, new = sys.argv[1], sys.argv[2]


def experiments(results: str) -> set[str]:
    return {path.parent.name for path in Path(results).glob("*/metrics.parquet")}


worst_all, unmatched_all = 0.0, 0
for exp in sorted(experiments(base) ^ experiments(new)):
    print(f"{exp}: only in {base if exp in experiments(base) else new}")
for exp in sorted(experiments(base) & experiments(new)):
    a = pd.read_parquet(f"{base}/{exp}/metrics.parquet")
    b = pd.read_parquet(f"{new}/{exp}/metrics.parquet")
    key = ["optimizer", "seed", "metric", "iteration"]
    m = a.merge(b, on=key, how="outer", suffixes=("_a", "_b"), indicator=True)
    only = m[m["_merge"] != "both"]
    both = m[m["_merge"] == "both"]
    rel = (both.value_a - both.value_b).abs() / both.value_a.abs().clip(lower=1e-300)
    both = both.assign(rel=rel)
    per = both.groupby("metric")["rel"].max().sort_values(ascending=False)
    worst_all = max(worst_all, per.max())
    top = ", ".join(f"{k} {v:.1e}" for k, v in per.head(4).items())
    print(
        f"{exp}: rows {len(a)} vs {len(b)}, unmatched {len(only)}; "
        f"worst rel {per.max():.2e} ({per.index[0]}); top: {top}"
    )
    unmatched_all += len(only)
    if len(only):
        print(only.groupby(["metric", "_merge"]).size().head(10))
ca = pd.read_csv(f"{base}/claims.csv")
cb = pd.read_csv(f"{new}/claims.csv")
same_layout = list(ca.columns) == list(cb.columns) and len(ca) == len(cb)
if not same_layout:
    print(
        f"claims: not compared, their layouts differ ({len(ca)} rows x {len(ca.columns)} "
        f"columns vs {len(cb)} x {len(cb.columns)}): the claims code changed between the "
        "two commits; the aggregate tables they are computed from are compared above"
    )
for col in ca.columns if same_layout else []:
    if ca[col].dtype == object or ca[col].dtype == bool:
        diff = ca[col].astype(str) != cb[col].astype(str)
        if diff.any():
            print(f"claims text column {col} differs in {diff.sum()} rows:")
            for i in np.where(diff)[0][:6]:
                print("   ", repr(ca[col][i])[:150], "|", repr(cb[col][i])[:150])
    else:
        r = ((ca[col] - cb[col]).abs() / ca[col].abs().clip(lower=1e-300)).max()
        print(f"claims numeric {col}: worst rel {r:.2e}")
print(f"WORST metrics rel {worst_all:.2e}; unmatched rows {unmatched_all}")
sys.exit(int(worst_all > TOLERANCE or unmatched_all > 0))
