"""The sweeps' one tuning rule (attnbias.realdata.tuning): the lowest area under the probe-loss
curve per update rule, never a setting whose cap bound at most of its steps; a sweep that
cannot meet the cap rule, or logged no probe, is refused naming its key."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.realdata import tuning

OPTIMIZERS = {
    "sgd-1": {"rule": "sgd", "lr": 0.1},
    "sgd-3": {"rule": "sgd", "lr": 0.3},
    "sps-1": {"rule": "sps", "c": 0.5, "eta_max": 0.1},
    "sps-3": {"rule": "sps", "c": 0.5, "eta_max": 1.0},
}
STEPS = (0, 10, 20)


def table(probe: dict, shares: dict) -> pd.DataFrame:
    """One seed; each optimizer's probe losses at STEPS and its cap's share at the last two."""
    rows = []
    for name, losses in probe.items():
        for step, loss in zip(STEPS, losses, strict=True):
            rows.append((name, 0, step, "probe_loss", loss))
            if name in shares:
                rows.append(
                    (name, 0, step, "cap_bound_share", np.nan if step == 0 else shares[name])
                )
    return pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])


PROBE = {"sgd-1": (1.0, 0.8, 0.6), "sgd-3": (1.0, 0.6, 0.5),
         "sps-1": (1.0, 0.5, 0.4), "sps-3": (1.0, 0.7, 0.6)}  # fmt: skip


def test_the_probe_area_is_the_mean_of_the_trapezoids_over_the_run():
    area = tuning.probe_area(table(PROBE, {}), "sgd-1")
    assert area.to_dict() == pytest.approx({0: (0.9 * 10 + 0.7 * 10) / 20})
    assert tuning.probe_area(table(PROBE, {}), "nobody").empty


def test_the_rule_chooses_the_lowest_area_whose_cap_bound_at_no_more_than_half():
    chosen = tuning.choose(table(PROBE, {"sps-1": 0.1, "sps-3": 0.0}), OPTIMIZERS, sweep="s")
    assert chosen.set_index("optimizer")["chosen"].to_dict() == {
        "sgd-1": False, "sgd-3": True, "sps-1": True, "sps-3": False}  # fmt: skip
    # the control: sps-1's cap bound at 90% of its steps (it was SGD): the other one
    chosen = tuning.choose(table(PROBE, {"sps-1": 0.9, "sps-3": 0.0}), OPTIMIZERS, sweep="s")
    assert chosen.set_index("optimizer")["chosen"].to_dict() == {
        "sgd-1": False, "sgd-3": True, "sps-1": False, "sps-3": True}  # fmt: skip
    assert not chosen.set_index("optimizer").loc["sps-1", "eligible"]


def test_a_sweep_that_cannot_meet_the_cap_rule_is_refused_naming_its_key():
    bound = table(PROBE, {"sps-1": 0.9, "sps-3": 0.6})
    with pytest.raises(ValueError, match=r"real_data.experiments.fig_lr.optimizers: every "
                       r"setting of sps \(sps-1, sps-3\) had its cap bind"):  # fmt: skip
        tuning.choose(bound, OPTIMIZERS, sweep="fig_lr")
    # a figure (no sweep) reports such a run as the SGD it became instead: nothing chosen
    chosen = tuning.choose(bound, OPTIMIZERS)
    assert not chosen[chosen["rule"] == "sps"]["chosen"].any()


def test_a_sweep_without_a_probe_or_an_unknown_rule_is_refused():
    no_probe = table(PROBE, {}).assign(metric="train_loss")
    with pytest.raises(ValueError, match="reads the probe loss.*train.probe_samples"):
        tuning.choose(no_probe, OPTIMIZERS, sweep="fig_lr")
    with pytest.raises(ValueError, match="real_data.tuning.rule"):
        tuning.choose(table(PROBE, {}), OPTIMIZERS, rule="final_train_loss")
    assert "probe" in tuning.RULES["probe_area"] and "50%" in tuning.RULES["probe_area"]
