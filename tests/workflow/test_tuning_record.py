"""A figure's settings checked against its sweep's record (attnbias.workflow.tuning_record):
checked where the record marks exactly the figure's settings, "not the tuned ones" where it
marks others (each control of the other), "as configured" where no record is built, and a
record that is not final_values_real's refused naming its file. The records here are
written as final_values_real writes them, from a sweep's metrics table."""

from __future__ import annotations

import pandas as pd
import pytest

from attnbias.realdata import tuning
from attnbias.realdata.final_values import final_values
from attnbias.realdata.tuning import RULES
from attnbias.workflow import tuning_record

SWEEP = {
    "sgd-1e-1": {"label": "SGD lr 0.1", "rule": "sgd", "lr": 0.1},
    "sgd-3e-1": {"label": "SGD lr 0.3", "rule": "sgd", "lr": 0.3},
    "adam-1e-3": {"label": "Adam lr 1e-3", "rule": "adam", "lr": 1.0e-3},
}
FIGURE = {"sgd": {"label": "SGD", "rule": "sgd", "lr": 0.3},
          "adam": {"label": "Adam", "rule": "adam", "lr": 1.0e-3}}  # fmt: skip
RECORD = "{figure}_final.csv"


def _metrics(probe: dict[str, tuple]) -> pd.DataFrame:
    """A one-seed sweep table: each optimizer's probe losses at steps 0, 10, 20, and a train
    loss and test accuracy at step 20 (what final_values reads)."""
    rows = []
    for name, losses in probe.items():
        steps = zip((0, 10, 20), losses, strict=True)
        rows += [(name, 0, step, "probe_loss", v) for step, v in steps]
        rows += [(name, 0, 20, "train_loss", losses[-1]), (name, 0, 20, "test_accuracy", 0.9)]
    return pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])


def write_record(folder, probe: dict[str, tuple], sweep: str = "fig_lr") -> str:
    """The sweep's record, as final_values_real writes it, in `folder`; its path pattern."""
    record = final_values(_metrics(probe), SWEEP, "probe_area", sweep)
    pattern = str(folder / RECORD)
    record.to_csv(pattern.format(figure=sweep), index=False, float_format="%.6g")
    return pattern


# sgd at 0.3 has the lower probe area: the rule chooses the figure's settings
CHOOSES_FIGURE = {"sgd-1e-1": (1.0, 0.8, 0.7), "sgd-3e-1": (1.0, 0.5, 0.4),
                  "adam-1e-3": (1.0, 0.6, 0.5)}  # fmt: skip
# the control: sgd at 0.1 has it
CHOOSES_OTHER = {**CHOOSES_FIGURE, "sgd-1e-1": (1.0, 0.3, 0.2)}


def _tuning(pattern: str) -> dict:
    checked = tuning_record.check(FIGURE, ["fig_lr"], pattern)
    return {"seed": 0, "sweeps": ["fig_lr"], "rule": "probe_area", **checked}


def test_a_record_that_marks_the_figures_settings_is_checked_and_one_that_marks_others_differs(
    tmp_path,
):
    tuning = _tuning(write_record(tmp_path, CHOOSES_FIGURE))
    assert tuning["state"] == tuning_record.CHECKED and tuning["mismatches"] == []
    assert tuning_record.words(tuning) == (
        "settings chosen by probe_area on seed 0 (fig_lr, checked against its record)"
    )
    # the control: the same figure, a record that marks sgd at 0.1
    tuning = _tuning(write_record(tmp_path, CHOOSES_OTHER))
    assert tuning["state"] == tuning_record.DIFFERS
    assert tuning["chosen"] == {"sgd": "lr=0.1", "adam": "lr=0.001"}
    assert tuning_record.words(tuning) == (
        "settings not the tuned ones: sgd runs lr=0.3 where fig_lr chose lr=0.1 "
        "(by probe_area on seed 0)"
    )


def test_without_the_record_the_settings_are_as_configured_and_say_how_to_build_it(tmp_path):
    pattern = str(tmp_path / RECORD)
    tuning = _tuning(pattern)
    assert tuning["state"] == tuning_record.NOT_BUILT
    assert tuning_record.words(tuning) == (
        "settings as configured: their sweep fig_lr is not in this results folder "
        f"(snakemake {tmp_path / 'fig_lr_final.csv'})"
    )
    write_record(tmp_path, CHOOSES_FIGURE)  # the control: once built, it is read
    assert _tuning(pattern)["state"] == tuning_record.CHECKED


def test_a_rule_the_sweep_did_not_tune_or_a_choice_no_run_runs_is_a_mismatch():
    choice = {"sgd": "lr=0.3", "sps": "c=0.5, eta_max=1"}
    runs = tuning_record.configured(FIGURE)
    assert runs == [("sgd", "sgd", "lr=0.3"), ("adam", "adam", "lr=0.001")]
    assert tuning_record.mismatches(choice, runs) == [
        {"optimizer": "adam", "rule": "adam", "runs": "lr=0.001", "chosen": None},
        {"optimizer": None, "rule": "sps", "runs": None, "chosen": "c=0.5, eta_max=1"},
    ]
    assert tuning_record.mismatches({"sgd": "lr=0.3", "adam": "lr=0.001"}, runs) == []
    tuning = {"seed": 0, "sweeps": ["s"], "rule": "probe_area", "state": tuning_record.DIFFERS,
              "mismatches": tuning_record.mismatches(choice, runs)}  # fmt: skip
    assert tuning_record.words(tuning) == (
        "settings not the tuned ones: adam runs adam, which s did not tune; s chose sps "
        "c=0.5, eta_max=1, which no optimizer runs (by probe_area on seed 0)"
    )


def test_the_caption_names_the_rule_only_where_the_record_was_checked(tmp_path):
    checked = tuning.caption(_tuning(write_record(tmp_path, CHOOSES_FIGURE)))
    assert checked.startswith(" Settings chosen by probe_area on seed 0 (fig_lr, checked")
    assert "seed 0 is never reported" in checked and RULES["probe_area"] in checked
    differs = tuning.caption(_tuning(write_record(tmp_path, CHOOSES_OTHER)))
    assert differs.startswith(" Settings not the tuned ones: sgd runs lr=0.3")
    assert RULES["probe_area"] not in differs
    assert tuning.caption({}) == tuning_record.words({}) == ""


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.drop(columns="best_of_rule"), "the columns final_values_real writes"),
        (lambda t: t.rename(columns={"settings": "setting"}), "not \\['optimizer'"),
        (lambda t: t.assign(best_of_rule="yes"), "best_of_rule is True or False, not \\['yes'\\]"),
        (lambda t: t.iloc[0:0, 0:0], "not a sweep's record"),  # an empty file
    ],
)
def test_a_record_not_written_by_final_values_real_is_refused_naming_the_file(
    tmp_path, edit, message
):
    pattern = write_record(tmp_path, CHOOSES_FIGURE)
    path = pattern.format(figure="fig_lr")
    assert tuning_record.read(path) == {"sgd": "lr=0.3", "adam": "lr=0.001"}  # the control
    edit(pd.read_csv(path)).to_csv(path, index=False)
    with pytest.raises(ValueError, match=message) as refused:
        tuning_record.read(path)
    assert str(refused.value).startswith(f"{path}: ")
    assert str(refused.value).endswith(f"delete it, then rebuild it (snakemake {path})")
    with pytest.raises(ValueError, match=message):
        _tuning(pattern)  # at planning time too
