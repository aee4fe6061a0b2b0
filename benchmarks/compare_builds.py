"""Compare two builds' results: every aggregate table row by row, and the claims table.

Prints, per experiment, the rows only one build has and the largest relative difference per
metric; for the claims, any text or verdict that differs and the largest relative difference
of each numeric column. Used to check that the compiled kernel (attnbias.training.kernel) gives the
results of the torch implementation (README, "Speed").

Usage: python benchmarks/compare_builds.py BASE/results NEW/results
"""

import sys

import numpy as np
import pandas as pd

base, new = sys.argv[1], sys.argv[2]
worst_all = 0.0
for exp in ["fig2", "fig3", "fig8", "fig9", "gd_vs_ngd"]:
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
    if len(only):
        print(only.groupby(["metric", "_merge"]).size().head(10))
ca = pd.read_csv(f"{base}/claims.csv")
cb = pd.read_csv(f"{new}/claims.csv")
print("claims columns", list(ca.columns))
assert list(ca.columns) == list(cb.columns) and len(ca) == len(cb)
for col in ca.columns:
    if ca[col].dtype == object or ca[col].dtype == bool:
        diff = ca[col].astype(str) != cb[col].astype(str)
        if diff.any():
            print(f"claims text column {col} differs in {diff.sum()} rows:")
            for i in np.where(diff)[0][:6]:
                print("   ", repr(ca[col][i])[:150], "|", repr(cb[col][i])[:150])
    else:
        r = ((ca[col] - cb[col]).abs() / ca[col].abs().clip(lower=1e-300)).max()
        print(f"claims numeric {col}: worst rel {r:.2e}")
print(f"WORST metrics rel {worst_all:.2e}")
