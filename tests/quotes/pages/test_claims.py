"""docs/claims.md's generated sections (attnbias.quotes.pages.claims): the rows of each kind."""

from __future__ import annotations

import math

from claims_tables import GOOD, OPTS, fixed_table, gd_like, ngd_like

from attnbias.claims import layouts, summary
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
