"""docs/claims.md's generated sections (attnbias.quotes.pages.claims): the rows of each kind,
and the fragile rows, which are the whole robustness table's, never the default build's
constants' alone."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from claims_tables import GOOD, OPTS, fixed_table, gd_like, ngd_like

from attnbias.claims import layouts, summary
from attnbias.quotes.build import Unbuilt
from attnbias.quotes.pages import claims as page


def _table(names=("x",)):
    experiment = {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2}
    tables = {  # runs that differ between experiments (a bit-identical run counts once)
        n: fixed_table(gd=gd_like() | {"gap_W": lambda t, s, i=i: (0.3 + i) / math.log(t + 2)},
                       ngd=ngd_like(-0.9 - 0.1 * i))
        for i, n in enumerate(names)
    }  # fmt: skip
    return layouts.claims({n: experiment for n in names}, tables, {n: [2.0, 2.0] for n in names},
                          {n: 3 for n in names}, {n: GOOD for n in names})  # fmt: skip


def test_the_rows_of_each_kind_and_which_statements_are_checks():
    table = _table()
    text = page.kinds(table)
    start, end = page.KINDS
    assert text.startswith(start) and text.endswith(end)
    assert summary.kinds_line(table) in text
    assert (
        "- **Thm. 6: GD converges globally**: 1 row (an asymptotic statement without a rate:"
        in text
    )
    assert "- **Thm. 1**: 1 row (a bound whose constant was lost:" in text
    assert "- **Thm. 1: norm growth**: 1 row (a near-tautology of the algorithm)." in text
    # the experiments of optional targets are left out, as the default build has them
    both = _table(("x", "y"))
    assert "Thm. 6: GD converges globally**: 2 rows" in page.kinds(both)
    assert page.kinds(both, optional=["y"]) == text


class FakeBuild:
    """A build whose claims table has one fragile covered row, with or without the whole
    robustness table (claims_robustness.parquet)."""

    def __init__(self, whole: bool):
        self.whole = whole

    def path(self, relative: str):
        if relative != "claims_robustness.parquet" or not self.whole:
            raise Unbuilt(relative)
        return relative

    def claims(self) -> pd.DataFrame:
        return pd.DataFrame(
            [{"statement": "fig2 ps ahead", "category": "covered", "fragile": True,
              "result": "Fig. 2: PS outperforms NGD", "experiment": "fig2", "claim": "PS ahead.",
              "outcome": "holds", "robustness": "PS's cap = 1e308 (ours): holds for ...; FRAGILE"}]
        )  # fmt: skip


def test_the_fragile_rows_need_the_whole_robustness_table():
    with pytest.raises(Unbuilt, match="claims_robustness.parquet"):
        page.whole_fragile(FakeBuild(whole=False))  # the default build's caps only
    text = page.whole_fragile(FakeBuild(whole=True))  # control: the whole table built
    assert "- **Fig. 2: PS outperforms NGD**, fig2: PS ahead. (holds) PS's cap" in text
