"""docs/claims.md's generated sections (attnbias.quotes.pages.claims): the fragile rows are
the whole robustness table's, never the default build's constants' alone."""

from __future__ import annotations

import pandas as pd
import pytest

from attnbias.quotes.build import Unbuilt
from attnbias.quotes.pages import claims


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
        claims.whole_fragile(FakeBuild(whole=False))  # the default build's caps only
    text = claims.whole_fragile(FakeBuild(whole=True))  # control: the whole table built
    assert "- **Fig. 2: PS outperforms NGD**, fig2: PS ahead. (holds) PS's cap" in text
