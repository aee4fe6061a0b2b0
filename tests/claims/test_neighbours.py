"""The neighbours' statements as claims (attnbias.claims.neighbours) on fixture tables
(tests/support/neighbour_tables.py): every measurable entry holds on the fixture and reads
"does not hold" on its control; which rows are counted, compared, or checks; an entry whose
table is not built, or that no build can measure, is one row saying why."""

import pandas as pd
import pytest
from neighbour_tables import control, tables

from attnbias.claims.neighbours import DEFECTS, KEYS, NEIGHBOURS, measure

MEASURABLE = sorted(s.key for s in NEIGHBOURS if s.measure is not None)


def rows_of(table: pd.DataFrame, key: str) -> pd.DataFrame:
    return table[table["statement"] == key]


def test_every_measurable_entry_holds_on_the_fixture():
    table = measure(tables())
    measured = table[table["kind"] != "not measured"]
    assert sorted(set(measured["statement"])) == MEASURABLE
    assert (measured["outcome"] == "holds").all(), measured.loc[
        measured["outcome"] != "holds", "verdict"
    ].tolist()


@pytest.mark.parametrize("key", MEASURABLE)
def test_each_entry_fails_on_its_control(key):
    mine = rows_of(measure(control(key)), key)
    assert len(mine) and (mine["outcome"] == "does not hold").any(), mine["verdict"].tolist()


def test_the_controls_cover_every_measurable_entry():
    with pytest.raises(KeyError):
        control("no-such-entry")
    assert set(MEASURABLE) <= KEYS and DEFECTS < KEYS


def test_figures_counted_theorems_on_random_starts_compared():
    table = measure(tables())
    category = table.groupby("statement")["category"].agg(set)
    for key in ("tfsvm-fig-local", "tfsvm-rank", "amd-own-p", "amd-joint"):
        assert category[key] == {"covered"}, key
    for key in ("tfsvm-gd-w", "tfsvm-kq-nuclear", "amd-lp"):
        assert category[key] == {"comparison"}, key  # proved for a start near the direction
        assert rows_of(table, key)["verdict"].str.startswith("comparison").all()
    assert category["tfsvm-rank-bound"] == {"consistency"}


def test_runs_without_locally_optimal_tokens_are_left_out_and_named():
    t = control("tfsvm-gd-w")  # seed 2's W short of the Frobenius SVM ...
    t["tfsvm_local"].loc[t["tfsvm_local"]["seed"] == 2, "locally_optimal"] = False
    row = rows_of(measure(t), "tfsvm-gd-w").iloc[0]  # ... but outside the hypothesis
    assert row["outcome"] == "holds" and "not on seed(s) 2, left out" in row["hypotheses"]


def test_unbuilt_tables_and_unseeded_starts_are_not_measured():
    t = tables()
    del t["tfsvm_scs"]
    table = measure(t)
    scs = rows_of(table, "tfsvm-defect-scs").iloc[0]
    assert scs["kind"] == "not measured" and "results/tfsvm_scs.csv" in scs["verdict"]
    for key in ("tfsvm-defect-seed", "amd-defect-seed"):
        row = rows_of(table, key).iloc[0]
        assert row["kind"] == "not measured" and "unseeded" in row["verdict"]
