"""A real-data row's verdict against the check of its figure's settings
(attnbias.claims.real_tuning): the same tables and races read "holds" where the sweep's
record marks exactly the figure's settings (CHECKED), "undecided" naming the settings that
differ where it marks others (DIFFERS), and keep their verdict, saying the settings were
not checked, where the record is not built (NOT_BUILT). The states are read from a record
written as final_values_real writes it (workflow.tuning_record.check), as the claims job
gets them (workflow.real_config.RealDataConfig.claims_real)."""

from __future__ import annotations

import pandas as pd
import pytest
from claims_tables import REAL_OPTS, decay, real_table

from attnbias.claims import layouts, summary, write
from attnbias.claims.real_constants import TUNED_KINDS
from attnbias.workflow import tuning_record

# SPS and SGD ahead of the others (the vision statements: SPS faster than SGD, SGD faster
# than SNGD) and Adam within a factor 2 of SGD: every counted row holds on its settings
PAPER = {"sgd": decay(2), "sngd": decay(1), "sps": decay(3), "adam": decay(2.1)}
SETTINGS = {"sgd": "lr=0.1", "sngd": "lr=0.5", "sps": "c=0.5", "adam": "lr=0.001"}
RACES = ["r sps faster than sgd", "r sgd faster than sngd", "r adam like sgd"]
UNTUNED = "settings not the tuned ones: sgd runs lr=0.1 where r_lr chose lr=0.3"
UNCHECKED = "settings as configured: their sweep r_lr is not in this results folder"


def chosen_by(tmp_path, marked: dict | None) -> dict:
    """The experiment's `chosen_by` as RealDataConfig.tuning gives it: the check of
    REAL_OPTS against a record of sweep r_lr marking `marked` (rule -> settings; None: no
    record in the results folder)."""
    pattern = str(tmp_path / "{figure}_final.csv")
    if marked is not None:
        rows = [{"rule": r, "settings": s, "best_of_rule": "True"} for r, s in marked.items()]
        rows.append({"rule": "sgd", "settings": "lr=1", "best_of_rule": "False"})
        record = pd.DataFrame(rows).assign(
            optimizer="o", label="o", seeds=0, final_iteration=10, final_train_loss=0.5,
            final_test_accuracy=0.8, probe_area=0.6, cap_bound_share="",
        )  # fmt: skip
        record[tuning_record.COLUMNS].to_csv(pattern.format(figure="r_lr"), index=False)
    checked = tuning_record.check(REAL_OPTS, ["r_lr"], pattern)
    return {"seed": 0, "sweeps": ["r_lr"], "rule": "probe_area", **checked}


def claims(tuning: dict, losses=None, dataset="mnist", norms=None) -> pd.DataFrame:
    """The claims table of one real-data experiment `r` whose settings' check is `tuning`
    (its words in "where" and its state in `chosen_by`, as claims_real gives them)."""
    experiment = {"layout": "real", "dataset": dataset, "optimizers": REAL_OPTS, "seeds": 2,
                  "labels": {o: o.upper() for o in REAL_OPTS},
                  "tuning": tuning_record.words(tuning), "chosen_by": tuning}  # fmt: skip
    return layouts.claims({"r": experiment}, {"r": real_table(losses or PAPER, norms)})


def measured(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["kind"] != "not measured"].set_index("key")


@pytest.fixture
def states(tmp_path) -> dict:
    """The three states of the same settings (and {}: no sweep tunes them)."""
    found = {
        tuning_record.NOT_BUILT: chosen_by(tmp_path, None),
        tuning_record.CHECKED: chosen_by(tmp_path, SETTINGS),
        tuning_record.DIFFERS: chosen_by(tmp_path, {**SETTINGS, "sgd": "lr=0.3"}),
    }
    assert {state: t["state"] for state, t in found.items()} == {s: s for s in found}
    return found | {"none": {}}


def test_a_race_on_the_tuned_settings_holds_and_on_others_is_undecided(states):
    checked = measured(claims(states[tuning_record.CHECKED])).loc[RACES]
    assert set(checked["outcome"]) == {"holds"} and set(checked["category"]) == {"covered"}
    differs = measured(claims(states[tuning_record.DIFFERS])).loc[RACES]
    assert set(differs["outcome"]) == {"undecided"}  # the control: the same table
    for key in RACES:
        verdict = differs.loc[key, "verdict"]
        assert verdict.startswith(f"undecided: {UNTUNED} (by probe_area on seed 0)")
        assert "runs with the tuned settings would decide it" in verdict
        # what the test read on these runs, and the numbers, are still shown
        assert verdict.endswith(f"; on these runs: {checked.loc[key, 'detail']}")
        for column in ("value_text", "mean", "low", "high"):
            assert differs.loc[key, column] == checked.loc[key, column]
        assert "not the ones their sweep chose" in differs.loc[key, "reference"]
        assert UNTUNED in differs.loc[key, "experiment"]  # "where" says it too


def test_a_race_that_fails_on_untuned_settings_is_no_finding(states):
    """A race lost on settings that are not the tuned ones is undecided, not "does not
    hold": a finding is about the optimizer, never our tuning."""
    slow = {**PAPER, "sps": decay(1)}
    checked = measured(claims(states[tuning_record.CHECKED], slow))
    assert checked.loc["r sps faster than sgd", "outcome"] == "does not hold"
    differs = measured(claims(states[tuning_record.DIFFERS], slow))
    row = differs.loc["r sps faster than sgd"]
    assert row["outcome"] == "undecided"
    assert "on these runs: SGD's area below SPS's" in row["verdict"]


def test_unchecked_settings_keep_the_verdict_and_say_so_in_the_row(states):
    checked = measured(claims(states[tuning_record.CHECKED])).loc[RACES]
    table = claims(states[tuning_record.NOT_BUILT])
    unchecked = measured(table).loc[RACES]
    assert unchecked["outcome"].equals(checked["outcome"])
    for key in RACES:
        assert unchecked.loc[key, "verdict"] == (
            f"{checked.loc[key, 'verdict']}; not checked against the tuning: "
            f"{tuning_record.words(states[tuning_record.NOT_BUILT])}"
        )
    # the Markdown row the reader sees names it, in "where" and in the verdict
    lines = [line for line in write.markdown_groups(table) if "SPS: trains faster" in line]
    assert len(lines) == 1 and lines[0].count(UNCHECKED) == 2
    shown = [line for line in write.markdown_groups(claims(states[tuning_record.CHECKED]))
             if "SPS: trains faster" in line]  # fmt: skip
    assert "not checked" not in shown[0]  # the control


def test_checked_settings_and_a_figure_without_a_sweep_change_nothing(states):
    checked = measured(claims(states[tuning_record.CHECKED]))
    alone = measured(claims(states["none"]))
    for column in ("outcome", "verdict", "reference", "value_text"):
        assert checked[column].equals(alone[column]), column
    assert not checked["verdict"].str.contains("tuned|not checked").any()


def test_only_the_rows_that_compare_optimizers_wait_for_the_tuning(states):
    """The layer norms (a measurement of each run alone) keep their verdict whatever the
    record says; the races and Adam's gap (TUNED_KINDS) do not."""
    grow = {o: [lambda s: 1 + s / 1000] for o in REAL_OPTS}
    differs = measured(claims(states[tuning_record.DIFFERS], dataset="cifar10", norms=grow))
    norms = differs[differs["statement"] == "real-layer-norms"]
    assert len(norms) == 4 and set(norms["outcome"]) == {"holds"}
    others = differs[differs["statement"] != "real-layer-norms"]
    assert set(others["kind"]) <= set(TUNED_KINDS) and set(others["outcome"]) == {"undecided"}


def test_the_counts_read_untuned_races_as_undecided(states):
    def line(state):
        return summary.summary_line(claims(states[state]))

    counts = "On the algorithms and data the statements are made for: {} hold, {} do not hold, {}"
    assert counts.format(3, 0, 0) in line(tuning_record.CHECKED)
    assert counts.format(3, 0, 0) in line(tuning_record.NOT_BUILT)
    assert counts.format(0, 0, 3) in line(tuning_record.DIFFERS)


def test_on_stand_in_data_an_untuned_race_is_an_undecided_comparison(states):
    rows = measured(claims(states[tuning_record.DIFFERS], dataset="rotten_tomatoes"))
    row = rows.loc["r sngd faster than sgd"]
    assert row["category"] == "comparison"
    assert row["verdict"].startswith(f"comparison: undecided: {UNTUNED}")
    # counted as a comparison, never as one of the statement's outcomes
    line = summary.summary_line(claims(states[tuning_record.DIFFERS], dataset="rotten_tomatoes"))
    assert "0 hold, 0 do not hold, 0 undecided; 2 comparisons" in line
