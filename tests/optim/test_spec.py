"""An optimizer's settings (attnbias.optim.spec): the specs it refuses, its caption, and
how a config entry becomes a spec."""

from __future__ import annotations

import dataclasses

import pytest

from attnbias.optim import rules
from attnbias.optim.rule import Look, Rule, TorchOptimizer
from attnbias.optim.spec import OptimizerSpec, StochasticSpec, config_settings, resolve, spec_of


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(rule="sign-gd"), "sign-gd"),
        (dict(rule="gd", normalize="per_block"), "rule gd ignores normalize"),
        (dict(rule="sign", beta1=0.5), "rule sign ignores beta1"),
        (dict(rule="sign", momentum=0.5), "rule sign ignores momentum"),
        (dict(rule="nsd"), "norm must be"),
        (dict(rule="nsd", norm="l1"), "an l_p norm needs p from 1.01"),
        (dict(rule="nsd", norm="l1.50"), "write it as 'l1.5'"),
        (dict(rule="mirror"), "needs p from 1.01 to 100"),
        (dict(rule="mirror", p=1.0000001), "needs p from 1.01 to 100"),  # its l_p: no name
        (dict(rule="mirror", p=1e6), "needs p from 1.01 to 100"),
        (dict(rule="adam", eps=0.0), "eps"),
        (dict(rule="muon", beta=1.0), "beta"),
        (dict(rule="kq", init_scale=0.0), "init_scale"),
        (dict(rule="sign", schedule="cosine"), "schedule"),
        (dict(rule="polyak", normalize="per_block"), "global"),
        (dict(rule="ngd", momentum=1.0), "momentum"),
        (dict(rule="ngd", momentum=-0.1), "momentum"),
        (dict(rule="ngd", normalize="blockwise"), "blockwise"),
    ],
)
def test_invalid_specs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OptimizerSpec(**kwargs)


def test_valid_edge_specs():
    OptimizerSpec("ngd", momentum=0.0)
    OptimizerSpec("ngd", momentum=0.999)
    OptimizerSpec("ngd", normalize="per_block")
    OptimizerSpec("gd", normalize="global", beta=0.9)  # settings it ignores, at their defaults


def test_caption_shows_settings():
    assert OptimizerSpec("ngd", lr=0.1, max_step=50.0).caption() == "NGD lr=0.1 max_step=50"
    assert "eta_max=none" in OptimizerSpec("polyak").caption()
    assert "eta_max=100" in OptimizerSpec("polyak", eta_max=100.0).caption()
    assert "momentum=0.9" in OptimizerSpec("ngd", momentum=0.9).caption()
    assert "separately" in OptimizerSpec("ngd", normalize="per_block").caption()


def test_a_config_entry_becomes_its_spec_less_its_label():
    entry = {"label": "NGD, u faster", "rule": "ngd", "lr": 0.1, "lr_u": 0.5}
    assert config_settings(entry) == {"rule": "ngd", "lr": 0.1, "lr_u": 0.5}
    assert spec_of(entry, real=False) == OptimizerSpec("ngd", lr=0.1, lr_u=0.5)
    assert spec_of({"rule": "gd"}, real=False) == OptimizerSpec("gd")  # the defaults
    with pytest.raises(TypeError, match="colour"):
        spec_of({"rule": "gd", "colour": "red"}, real=False)
    with pytest.raises(KeyError, match="names its rule"):
        spec_of({"lr": 0.1}, real=False)


def test_an_experiment_is_resolved_in_its_regime_in_config_order():
    """resolve: {name: spec}, an OptimizerSpec in a synthetic experiment, a StochasticSpec
    in a real-data one; each spec says its algorithm and look key (a real-data run's: its
    rule), and a rule outside the regime is refused naming it."""
    synthetic = {"b": {"rule": "ngd", "max_step": 10.0}, "a": {"rule": "gd", "label": "GD"}}
    specs = resolve(synthetic, real=False)
    assert list(specs) == ["b", "a"] and specs["a"] == OptimizerSpec("gd")
    assert specs["b"].algorithm("fixed_decoder") == "ngd-capped"
    real = resolve({"s": {"rule": "sps", "eta_max": 0.5, "label": "SPS"}}, real=True)
    assert real["s"] == StochasticSpec("sps", {"eta_max": 0.5})
    assert real["s"].algorithm() == real["s"].look_key(None) == "sps"
    assert real["s"].entry() == {"rule": "sps", "eta_max": 0.5}
    with pytest.raises(ValueError, match="rule sps runs on torch parameters only"):
        resolve({"s": {"rule": "sps"}}, real=False)
    with pytest.raises(ValueError, match="rule ngd does not run on torch parameters"):
        resolve({"n": {"rule": "ngd"}}, real=True)


def test_u_steps_at_lr_unless_lr_u_is_set():
    assert OptimizerSpec("gd", lr=0.3).lr_of("u") == 0.3
    spec = OptimizerSpec("gd", lr=0.3, lr_u=0.05)
    assert (spec.lr_of("W"), spec.lr_of("u")) == (0.3, 0.05)


def test_a_real_data_entry_becomes_its_rule_and_constructor_settings():
    """StochasticSpec: the torch optimizer's rule and keywords (no label), and the caption
    that the legend and the final-values table show."""
    entry = {"label": "SPS", "rule": "sps", "eta_max": 0.5, "c": 0.5}
    spec = spec_of(entry, real=True)
    assert (spec.rule, spec.settings) == ("sps", {"eta_max": 0.5, "c": 0.5})
    assert spec.settings_text() == "c=0.5, eta_max=0.5"  # sorted by name
    assert spec.caption() == "SPS c=0.5, eta_max=0.5"
    assert spec_of({"rule": "sgd"}, real=True).caption() == "SGD"  # none set


def test_a_real_data_caption_prints_the_rules_own_name(monkeypatch):
    """The caption names the rule as its module does (Rule.display_name), never the config's
    `rule` upper-cased: "Adam", not "ADAM"."""
    assert spec_of({"rule": "adam", "lr": 2e-5}, real=True).caption() == "Adam lr=2e-05"
    assert spec_of({"rule": "sngd", "lr": 1}, real=True).caption() == "SNGD lr=1"
    # the control: a module whose name for the rule is no case of its key
    renamed = dataclasses.replace(rules.RULES["sgd"], names={"sgd": "plain SGD"})
    monkeypatch.setitem(rules.RULES, "sgd", renamed)
    assert spec_of({"rule": "sgd", "lr": 0.1}, real=True).caption() == "plain SGD lr=0.1"


def test_a_rule_on_torch_parameters_without_its_own_name_is_refused():
    """A real-data run's algorithm is its rule, so its module names it (names[name])."""
    torch_optimizer = TorchOptimizer("torch.optim:SGD", {"lr": {}})
    looks = {"x": Look("gd", "o")}
    assert Rule("x", {"x": "X"}, looks, torch=torch_optimizer).display_name == "X"  # control
    with pytest.raises(ValueError, match="rule 'x': a rule on torch parameters names its own"):
        Rule("x", {"y": "Y"}, looks, torch=torch_optimizer)
