"""TF-as-SVM's rank grid (attnbias.neighbours.rank_grid): a row per cell, the infeasible
instances counted and never ranked, the ranks those of attnbias.neighbours.ranks."""

from __future__ import annotations

import math

from attnbias.data import models
from attnbias.neighbours import rank_grid, ranks


def test_a_row_per_cell_and_d1_counted_infeasible():
    table = rank_grid.table(
        {"seeds": 2, "n": [2], "T": [5], "d": [1, 3], "relative_threshold": 1e-4}
    )
    assert list(zip(table["n"], table["T"], table["d"], strict=True)) == [(2, 5, 1), (2, 5, 3)]
    d1, d3 = table.iloc[0], table.iloc[1]
    assert d1["infeasible"] == 2 and math.isnan(d1["mean_nuclear"])
    assert d3["infeasible"] == 0  # the control: a feasible cell is ranked
    assert 1 <= d3["min_nuclear"] <= d3["max_nuclear"] <= 2  # rank <= n = 2


def test_the_cell_reads_the_ranks_of_count_ranks():
    row = rank_grid.cell(3, 4, 5, 2, 1e-4)
    found = ranks.count_ranks(
        {s: models.generate("cross_gaussian", s, {"n": 3, "T": 4, "d": 5}) for s in range(2)}
    )
    assert row["mean_fro"] == found.mean("fro") and row["mean_nuclear"] == found.mean("nuclear")
    assert row["infeasible"] == len(found.infeasible)
