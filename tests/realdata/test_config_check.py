"""The real-data config's refusals (attnbias.realdata.config_check) for held-out tuning and
the probe subset: each names its key path, and the default config passes them (the control
of every refusal)."""

from __future__ import annotations

import copy

import pytest
import yaml
from project import REPO, checked_config

from attnbias.workflow.configkeys import ConfigError

DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def _config(**edits) -> dict:
    config = copy.deepcopy(DEFAULT)
    experiments = config["real_data"]["experiments"]
    for path, value in edits.items():
        *keys, last = path.split("__")
        section = experiments
        for key in keys:
            section = section[key]
        section[last] = value
    return config


def test_the_default_config_tunes_on_held_out_seeds():
    checked_config(copy.deepcopy(DEFAULT))  # the control: nothing below is refused here
    experiments = DEFAULT["real_data"]["experiments"]
    for name in ("fig1_minilm", "fig4_minilm", "fig6_mnist5k", "fig1", "fig4", "fig6", "fig7"):
        assert experiments[name]["first_seed"] > experiments[name]["tuning_seed"] == 0
        assert experiments[name]["seeds"] >= 5  # five paired races at least
        assert experiments[name]["train"]["probe_samples"] > 0  # what the races read
        sweeps = [s for s in experiments.values() if s.get("sweep_of") == name]
        assert [s["seeds"] for s in sweeps] == [1] and "first_seed" not in sweeps[0]


@pytest.mark.parametrize(
    ("edits", "key", "message"),
    [
        # the sweep runs seeds 0 and 1: fig1_minilm reports seed 1
        ({"fig1_minilm_lr__seeds": 2}, ("fig1_minilm_lr", "first_seed"), r"seed\(s\) \[1\]"),
        ({"fig1_minilm__tuning_seed": 1}, ("fig1_minilm", "tuning_seed"), "must not be reported"),
        ({"fig1_minilm__tuning_seed": 3, "fig1_minilm__first_seed": 4},
         ("fig1_minilm", "tuning_seed"), "its sweep fig1_minilm_lr runs seed"),
        # the paper-scale sweeps likewise: fig4_lr on seeds 0 and 1, fig1_lr on seed 1
        ({"fig4_lr__seeds": 2}, ("fig4_lr", "first_seed"), r"seed\(s\) \[1\], which fig4 "),
        ({"fig1_lr__first_seed": 1}, ("fig1_lr", "first_seed"), r"\[1\], which fig1 reports"),
        ({"fig4_minilm_lr__sweep_of": "fig1_minilm_lr"}, ("fig4_minilm_lr", "sweep_of"),
         "not a real-data figure"),
        ({"fig1_minilm__train__probe_samples": 1281}, ("fig1_minilm", "train", "probe_samples"),
         "larger than train_samples"),
        ({"fig6_mnist5k_lr__train": {"epochs": 1, "batch_size": 128, "log_every": 25}},
         ("fig6_mnist5k_lr", "train", "probe_samples"), "reads the probe loss"),
    ],
)  # fmt: skip
def test_a_reported_tuning_seed_or_a_probe_beyond_the_training_set_is_refused(edits, key, message):
    with pytest.raises(ConfigError, match=message) as refused:
        checked_config(_config(**edits))
    assert refused.value.key == ".".join(("real_data", "experiments", *key))
