"""Sources of quoted facts (attnbias.quotes.sources): a robustness cell's measured range."""

from __future__ import annotations

import pandas as pd

from attnbias.quotes.sources import robust_cell

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
