"""The claims table's summary lines (attnbias.claims.summary): how many rows of each kind."""

from __future__ import annotations

import re

from claims_tables import GOOD, OPTS, fixed_table, gd_like, ngd_like

from attnbias.claims import layouts, write


def test_the_summary_says_how_many_rows_of_each_kind_there_are(monkeypatch):
    """Counted rows by their test, consistency checks by why they cannot fail (a
    near-tautology, a bound whose constant was lost, an asymptotic reading): the numbers sum
    to the line's counted and consistency counts; a row moved out of the counts moves between
    the two lists (the control)."""
    table = layouts.claims(
        {"x": {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2}},
        {"x": fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
        {"x": [2.0, 2.0]}, {"x": 3}, {"x": GOOD},
    )  # fmt: skip
    line = write.summary_line(table)
    counted, checks = line.split("The counted rows by test: ")[1].split(
        ". The consistency checks: "
    )
    paper = table[~write.beyond_rows(table)]
    by_kind = paper[paper["category"] == "covered"]["kind"].value_counts()
    assert sum(int(n) for n in re.findall(r" (\d+)(?:;|$)", counted)) == by_kind.sum()
    consistency = (paper["category"] == "consistency").sum()
    assert f"; {consistency} consistency checks" in line
    assert sum(int(n) for n in re.findall(r" (\d+)(?:;|\.$)", checks)) == consistency
    assert "a near-tautology 2" in checks and "a bound whose constant was lost 1" in checks
    assert "an asymptotic statement without a rate 1" in checks
    # the control: Thm. 6's check lifted, its row is counted (a measurement) and not a check
    from dataclasses import replace

    from attnbias.claims import statements

    thm6 = statements.by_key("thm6")
    lifted = tuple(replace(s, check="") if s is thm6 else s for s in statements.STATEMENTS)
    monkeypatch.setattr(layouts, "STATEMENTS", lifted)
    again = write.summary_line(layouts.claims(
        {"x": {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2}},
        {"x": fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
        {"x": [2.0, 2.0]}, {"x": 3}, {"x": GOOD},
    ))  # fmt: skip
    assert "an asymptotic statement" not in again and f"; {consistency - 1} consistency" in again
    assert f"measurement {by_kind['measurement'] + 1}" in again
