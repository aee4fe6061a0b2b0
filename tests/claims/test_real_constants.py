"""The constants a real-data row names (attnbias.claims.real_constants), as the claims'
column `constants` shows them beside the optimizers' settings (claims.robustness.named):
the race's level, probe subset, horizon and tuning rule; Adam's gap factor."""

from __future__ import annotations

from claims_tables import REAL_OPTS, decay, real_table

from attnbias.claims import layouts, real_constants, robustness
from attnbias.claims.paired_race import ALPHA
from attnbias.realdata.cap_bound import MAX_CAP_SHARE
from attnbias.workflow import tuning_record

TUNED = {"seed": 0, "sweeps": ["r_lr"], "rule": "probe_area", "state": tuning_record.CHECKED}


def _experiment(dataset: str = "mnli", **extra) -> dict:
    return {"layout": "real", "dataset": dataset, "optimizers": REAL_OPTS, "seeds": 2,
            "labels": {o: o.upper() for o in REAL_OPTS}, **extra}  # fmt: skip


def _named(experiment: dict):
    table = real_table({"sgd": decay(1), "sngd": decay(2), "sps": decay(3), "adam": decay(1.1)})
    experiment = real_constants.with_horizon({"r": experiment}, {"r": table})
    rows = layouts.claims(experiment, {"r": table})
    return robustness.named(rows, {}, experiment).set_index("key")["constants"]


def test_a_race_names_its_rates_test_probe_horizon_and_tuning():
    constants = _named(_experiment(probe_samples=256, chosen_by=TUNED))
    assert constants["r sngd faster than sgd"].split("; ") == [
        "SGD's lr = 0.1", "SNGD's lr = 0.5",
        f"paired t-test's one-sided level = {ALPHA:g}", "probe subset = 256 training samples",
        "horizon = 2,000 steps",
        "settings chosen by probe_area on seed 0 (r_lr, checked against its record), cap "
        f"bound at <= {MAX_CAP_SHARE:.0%} of the steps",
    ]  # fmt: skip
    vision = _named(_experiment("mnist", probe_samples=256, chosen_by=TUNED))
    adam = vision["r adam like sgd"]
    assert adam.startswith("SGD's lr = 0.1; ADAM's lr = 0.001; Adam/SGD final-loss factor = 2")
    assert "probe_area on seed 0" in adam and "level" not in adam


def test_without_a_probe_or_a_sweep_the_race_says_so_and_names_no_rule():
    constants = _named(_experiment())
    race = constants["r sps faster than sgd"]
    assert "curve = train loss (no probe)" in race and "horizon = 2,000 steps" in race
    assert "chosen by" not in race and "probe subset" not in race  # the control


def test_settings_the_sweeps_record_does_not_confirm_are_never_named_chosen():
    """The rows of a figure whose sweep's record marks other settings, or is not built,
    say so and name no tuning rule (a record that confirms them: the first test)."""
    differs = {**TUNED, "state": tuning_record.DIFFERS, "mismatches": [
        {"optimizer": "sgd", "rule": "sgd", "runs": "lr=0.1", "chosen": "lr=0.3"}]}  # fmt: skip
    missing = {**TUNED, "state": tuning_record.NOT_BUILT, "records": ["results/r_lr_final.csv"]}
    for chosen_by, said in (
        (differs, "settings not the tuned ones: sgd runs lr=0.1 where r_lr chose lr=0.3"),
        (missing, "settings as configured: their sweep r_lr is not in this results folder"),
    ):
        race = _named(_experiment(probe_samples=256, chosen_by=chosen_by))["r sngd faster than sgd"]
        assert said in race
        assert "chosen by" not in race and "cap bound at <=" not in race


def test_other_kinds_and_layouts_name_nothing_of_their_own():
    assert real_constants.words({"probe_samples": 256}, "measurement") == []
    assert real_constants.words({}, "race")[0] == f"paired t-test's one-sided level = {ALPHA:g}"
    assert real_constants.with_horizon({"x": {"a": 1}}, {}) == {"x": {"a": 1}}
