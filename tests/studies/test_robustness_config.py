"""The workflow's reading of `claims_robustness` (attnbias.studies.robustness_config)
and its refusals.
"""

from __future__ import annotations

import copy

import pandas as pd
import pytest
import yaml
from project import REPO, SCHEMA, checked_config
from snakemake.utils import validate

from attnbias.studies.robustness_config import RobustnessConfig
from attnbias.workflow import configkeys
from attnbias.workflow.config import WorkflowConfig

# ---- the workflow's reading and its refusals ------------------------------------------------


def default_config() -> dict:
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    validate(config, schema=str(SCHEMA), set_default=True)
    return config


def test_a_constant_reads_the_experiments_sharing_its_runs():
    config = default_config()
    found = RobustnessConfig(WorkflowConfig(config))
    assert found.experiments("ngd_cap") == ["fig2", "fig2_uncapped"]  # NGD's runs are shared
    assert found.experiments("eq10_eta") == ["fig3", "fig3_cond1"]
    assert found.ours("ngd_cap") == 1e148 and found.ours("horizon") == 10000
    assert found.ours("ps_cap") == 1e308 and found.ours("caps") == 1e308  # PS's first
    assert found.point("ngd_cap")["paths"] == {
        "fig2": ["optimizers.ngd.max_step", "optimizers.ngd-mom.max_step"]
    }
    assert found.point("caps")["paths"] == {
        "fig2": ["optimizers.ps.eta_max", "optimizers.ngd.max_step", "optimizers.ngd-mom.max_step"]
    }
    assert not found.default_build and found.targets("x.md") == []
    config["claims_robustness"]["default_build"] = True
    found = RobustnessConfig(WorkflowConfig(config))
    assert found.claims_table("t.parquet", "d.parquet")["table"] == "t.parquet"
    assert found.claims_input("t.parquet", "d.parquet") == {"robustness": "t.parquet"}
    assert found.in_default == list(config["claims_robustness"]["constants"])
    config["claims_robustness"]["constants"] = {}
    found = RobustnessConfig(WorkflowConfig(config))
    assert found.claims_table("t.parquet", "d.parquet") == {
        "absent": "the config's claims_robustness names no constant"
    }


def test_the_caps_are_measured_in_the_default_build_and_the_others_named_unmeasured(tmp_path):
    config = default_config()
    found = RobustnessConfig(WorkflowConfig(config))
    assert found.in_default == ["ngd_cap", "ps_cap", "caps"] and found.partial()
    assert found.claims_input("t.parquet", "d.parquet") == {"robustness_default": "d.parquet"}
    read = found.claims_table(str(tmp_path / "none.parquet"), "d.parquet")
    assert read["table"] == "d.parquet" and "build results/claims_robustness.md" in read["hint"]
    assert read["unmeasured"] == [n for n in found.constants if n not in found.in_default]
    assert read["identity"] == found.summary_identity(found.in_default)
    assert read["identity"] != found.summary_identity()  # never taken for the whole table
    assert list(found.described(found.in_default)) == found.in_default
    assert list(found.point_files("p/{constant}", ["caps"]).values()) == ["p/caps"]
    # where the whole table is built, it is read, with the partial one to fall back on
    whole = tmp_path / "whole.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(whole)
    read = found.claims_table(str(whole), "d.parquet")
    assert read["table"] == str(whole) and read["fallback"]["table"] == "d.parquet"
    # control: without a constant of the default build, nothing is measured there
    for entry in config["claims_robustness"]["constants"].values():
        entry.pop("default_build", None)
    found = RobustnessConfig(WorkflowConfig(config))
    assert found.in_default == [] and not found.partial()
    assert found.claims_input("t.parquet", "d.parquet") == {}
    absent = found.claims_table(str(tmp_path / "none.parquet"), "d.parquet")
    assert "build results/claims_robustness.md" in absent["absent"]


checked = checked_config


def test_the_default_constants_pass():
    checked(yaml.safe_load((REPO / "config/config.yaml").read_text()))


@pytest.mark.parametrize(
    "change, key, words",
    [
        (
            lambda c: c["set"].update(fig2_unequal_scores="optimizers.ps.eta_max"),
            "claims_robustness.constants.ngd_cap.set.fig2_unequal_scores",
            "no experiment whose claims the default build or results/geometry.pdf measures",
        ),
        (
            lambda c: c.update(set={"fig2": "optimizers.ps.max_step"}),
            "claims_robustness.constants.ngd_cap.set.fig2",
            "base experiment has no key 'max_step'",
        ),
        (
            lambda c: c.update(values=[1.0e5, 1.0e20]),
            "claims_robustness.constants.ngd_cap.values",
            "must hold ours, the config's value 1e+148",
        ),
        (
            lambda c: c.update(plausible=[1.0e10, 1.0e100]),
            "claims_robustness.constants.ngd_cap.plausible",
            "holding ours",
        ),
        (
            lambda c: c["set"]["fig2"].append("optimizers.ps.eta_max"),
            "claims_robustness.constants.ngd_cap.set",
            "a constant is one value",
        ),
        (
            lambda c: c.update(kinds=["consistency"]),
            "claims_robustness.constants.ngd_cap.kinds[0]",
            "no kind of counted test",
        ),
        (
            lambda c: c.update(values=[-1.0, 1.0e148]),
            "claims_robustness.constants.ngd_cap.set.fig2",
            "value (-1.0, -1.0)",
        ),
    ],
    ids=[
        "not-default",
        "missing-key",
        "ours-missing",
        "plausible",
        "two-values",
        "kind",
        "bad-value",
    ],  # fmt: skip
)
def test_a_bad_constant_is_refused_naming_its_key(change, key, words):
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    entry = copy.deepcopy(config["claims_robustness"]["constants"]["ngd_cap"])
    change(entry)
    config["claims_robustness"]["constants"]["ngd_cap"] = entry
    with pytest.raises(configkeys.ConfigError) as err:
        checked(config)
    assert err.value.key == key
    assert words in str(err.value)


def test_caps_moved_together_may_hold_two_values_of_ours():
    """fig2's two caps (PS's 1e308, NGD's 1e148) moved as one constant: accepted with
    `together`, refused without it (a constant is otherwise one value)."""
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    assert config["claims_robustness"]["constants"]["caps"]["together"] is True
    checked(copy.deepcopy(config))
    del config["claims_robustness"]["constants"]["caps"]["together"]
    with pytest.raises(configkeys.ConfigError, match="a constant is one value") as err:
        checked(config)
    assert err.value.key == "claims_robustness.constants.caps.set"


def test_a_geometry_constant_reads_both_geometry_experiments_and_their_svms():
    found = RobustnessConfig(WorkflowConfig(default_config()))
    names = ["geometry_example1", "geometry_dm"]
    assert found.experiments("geometry_sign_lr") == names
    assert found.experiments("gd_lr") == ["fig2", "fig2_uncapped"]  # the paper's: as before
    assert found.ours("geometry_adam_beta2") == 0.999 and found.ours("geometry_adam_eps") == 1e-8
    settings = found.settings("geometry_adam_eps")
    assert list(settings) == names
    for name in names:
        assert settings[name]["layout"] == "geometry" and settings[name]["norms"]
        assert settings[name]["train"]["iterations"] == 30000
    wildcards = type("W", (), {"constant": "geometry_adam_eps"})
    patterns = ("m/{experiment}", "d/{experiment}", "s/{experiment}",
                "f/{experiment}/{optimizer}", "g/{experiment}")  # fmt: skip
    inputs = found.inputs(*patterns)(wildcards)
    assert {inputs[f"svm_geometry/{n}"] for n in names} == {f"g/{n}" for n in names}
    assert not any(k.startswith("final/") for k in inputs)  # no joint-training final u
    identities = found.input_identities(*patterns)(wildcards)
    assert identities["g/geometry_dm"] == found.wf.seed_identities("svm_geometry", "geometry_dm")
    # every step length of the geometry optimizers, and Adam's beta2 and eps, is a constant
    for opt in default_config()["experiments"]["geometry_example1"]["optimizers"]:
        assert f"geometry_{opt.replace('-', '_')}_lr" in found.constants, opt
    described = found.described()["geometry_adam_beta2"]
    assert described["ours"] in described["values"] and described["why"]


def test_a_constant_may_set_a_geometry_experiment_but_not_another_optional_one():
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    checked_config(config)  # the geometry constants pass
    entry = config["claims_robustness"]["constants"]["geometry_sign_lr"]
    entry["set"]["fig2_unequal_scores"] = "optimizers.gd.lr"
    with pytest.raises(Exception, match="the default build or results/geometry.pdf measures"):
        checked_config(config)
