"""The Sources the docs' numbers come from (attnbias.quotes.sources): the claims summary's
counts of rows of each kind, read by name, and a robustness cell's measured range."""

from __future__ import annotations

import pandas as pd
import pytest
from claims_tables import GOOD, OPTS, fixed_table, gd_like, ngd_like

from attnbias.claims import layouts
from attnbias.quotes.sources import robust_cell, summary, summary_kind


class _Build:
    """What the summary's sources read of a build: its claims table and the claims job's
    config (no optional target)."""

    def __init__(self, table):
        self.table = table

    def claims(self):
        return self.table

    def provenance(self, name):
        return {"config": {}}


def test_the_summary_counts_rows_of_each_kind_by_name():
    table = layouts.claims(
        {"x": {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2}},
        {"x": fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
        {"x": [2.0, 2.0]}, {"x": 3}, {"x": GOOD},
    )  # fmt: skip
    b = _Build(table)
    consistency = summary(9).read(b)
    parts = ("a bound whose constant was lost", "a near-tautology",
             "an asymptotic statement without a rate")  # fmt: skip
    assert sum(summary_kind(p).read(b) for p in parts) == consistency
    assert summary_kind("a near-tautology").read(b) == 2
    # the control: a kind the build has no row of is refused, not read as 0
    with pytest.raises(ValueError, match="no rows of the kind 'a data check'"):
        summary_kind("a data check").read(b)


CELL = (
    "PS's cap (eta_max) = 1e308 (ours): holds for PS's cap (eta_max) in [1e148, 1e308]; "
    "does not hold at 1e10 (10 of 10 seeds) (tried: 1e10, 1e148, 1e308)"
)


class OneRow:
    """A build whose claims table has one row."""

    def row(self, key: str) -> pd.Series:
        assert key == "fig2 ps ahead of ngd"
        return pd.Series({"robustness": CELL})


def test_a_robustness_fact_is_true_only_where_the_cell_says_its_range():
    said = robust_cell("fig2 ps ahead of ngd", "holds for PS's cap (eta_max) in [1e148, 1e308]")
    assert said.read(OneRow()) is True
    # control: another range (the verdict flipping elsewhere) is not the cell's
    other = robust_cell("fig2 ps ahead of ngd", "holds for PS's cap (eta_max) in [1e10, 1e308]")
    assert other.read(OneRow()) is False
