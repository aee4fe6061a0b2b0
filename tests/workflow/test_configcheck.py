"""The config checks (attnbias.workflow.configcheck): a bad config refused by key path."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from attnbias.workflow import (
    configcheck,
    configkeys,
)

SCHEMA = "workflow/schemas/config.schema.yaml"


def tiny() -> dict:
    return yaml.safe_load((Path(__file__).parents[2] / "config/tiny.yaml").read_text())


# ---------------------------------------------------------------- config: refused by key

NAN, INF = float("nan"), float("inf")


def test_config_checks_name_the_key_path_directly():
    config = tiny()
    config["experiments"]["fig3"]["optimizers"]["ps"]["f_star"] = NAN
    with pytest.raises(configkeys.ConfigError, match=r"experiments\.fig3\.optimizers\.ps\.f_star"):
        configcheck.check_finite(config)
    assert (
        configkeys.key_path(("global_convergence", "scales", 1)) == "global_convergence.scales[1]"
    )


def test_binary_digits_of_one_class_are_refused_naming_the_key():
    schema = yaml.safe_load((Path(__file__).parents[2] / SCHEMA).read_text())
    config = tiny()
    config["experiments"]["fig9"]["data"]["params"]["digits"] = [1, 1]
    with pytest.raises(configkeys.ConfigError, match=r"fig9\.data\.params\.digits: \[1, 1\]"):
        configcheck.check(config, schema)
    config["experiments"]["fig9"]["data"]["params"]["digits"] = [1, 7]  # two classes: valid
    configcheck.check(config, schema)


def test_config_checks_do_not_touch_a_valid_config():
    config = tiny()
    original = copy.deepcopy(config)
    schema = yaml.safe_load(
        (Path(__file__).parents[2] / "workflow/schemas/config.schema.yaml").read_text()
    )
    configcheck.check(config, schema)
    assert config == original


# ---------------------------------------------------------------- the report is safe

HOSTILE = "GD</script><b id=INJECTED>x</b>"


def test_the_config_checks_run_the_markup_check_first():
    config = tiny()
    config["experiments"]["fig2"]["optimizers"]["gd"]["label"] = HOSTILE
    schema = yaml.safe_load((Path(__file__).parents[2] / SCHEMA).read_text())
    with pytest.raises(configkeys.ConfigError, match=r"fig2\.optimizers\.gd\.label"):
        configcheck.check(config, schema)


def test_renamed_keys_name_their_replacement():
    """Old keys fail fast (no Snakemake needed), naming the key that replaces them."""
    config = tiny()
    fig3 = config["experiments"]["fig3"]
    fig3["figure"] = fig3.pop("layout")
    with pytest.raises(
        configkeys.ConfigError, match=r"experiments\.fig3\.figure: renamed to layout"
    ):
        configcheck.check_renamed(config)
    config = tiny()
    config["global_convergence"]["optimizers"]["ngd"]["cap"] = 5.0
    with pytest.raises(configkeys.ConfigError, match=r"ngd\.cap: renamed to max_step"):
        configcheck.check_renamed(config)
    configcheck.check_renamed(tiny())  # the current keys pass
