"""TF-as-SVM's rank experiment (svm_rank.ipynb) over a grid: for each (n, T, d) cell, the
ranks of the Frobenius and the nuclear W-SVM of the globally optimal tokens on `seeds`
instances of their generator, infeasible instances counted apart (attnbias.neighbours.ranks)."""

from __future__ import annotations

import itertools

import pandas as pd

from attnbias.data import models
from attnbias.neighbours import ranks

NORMS = ("fro", "nuclear")


def cell(n: int, T: int, d: int, seeds: int, relative: float) -> dict:
    """One (n, T, d) cell: instances, infeasible ones, and per norm the mean, min and max
    rank over the feasible ones (NaN where none is)."""
    instances = {
        f"cross_gaussian n={n} T={T} d={d} seed {s}": models.generate(
            "cross_gaussian", s, {"n": n, "T": T, "d": d}
        )
        for s in range(seeds)
    }
    found = ranks.count_ranks(instances, NORMS, relative)
    row = {"n": n, "T": T, "d": d, "instances": seeds, "infeasible": len(found.infeasible)}
    for norm in NORMS:
        values = found.ranks[norm]
        row[f"mean_{norm}"] = found.mean(norm)
        row[f"min_{norm}"] = min(values) if values else float("nan")
        row[f"max_{norm}"] = max(values) if values else float("nan")
    return row


def table(settings: dict) -> pd.DataFrame:
    """Every cell of the config's grid (neighbours.tfsvm_rank: n, T, d, seeds,
    relative_threshold), one row each."""
    grid = itertools.product(settings["n"], settings["T"], settings["d"])
    return pd.DataFrame(
        [cell(n, T, d, settings["seeds"], settings["relative_threshold"]) for n, T, d in grid]
    )
