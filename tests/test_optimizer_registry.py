"""The rules' registry (attnbias.optim.rules) and the worked example of docs/layout.md,
"Adding an optimizer": its entry and config entry, read from that page, make a rule that
the spec, the config checks, the full-batch step and a torch run all take."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from attnbias.data import models
from attnbias.model.gradients import ScaledGradient
from attnbias.optim import rules
from attnbias.optim.full_batch import Optimizer
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm import max_margin
from attnbias.training import dispatch, kernel
from attnbias.training.metrics import log_grid
from attnbias.training.token_problem import TokenProblem
from attnbias.workflow import configcheck

ROOT = Path(__file__).resolve().parents[1]
F64 = torch.float64


def _example_blocks() -> dict[str, str]:
    """The code blocks of layout.md's "Adding an optimizer" section, by language."""
    text = (ROOT / "docs/layout.md").read_text()
    section = text.split("## Adding an optimizer", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"```(\w+)\n(.*?)```", section, flags=re.DOTALL))


def _example_name() -> str:
    """The rule name the page's python block registers."""
    return re.search(r'@rule\(\s*"([^"]+)"', _example_blocks()["python"]).group(1)


@pytest.fixture
def registry(monkeypatch):
    """The registry as a copy without the page's example (whether or not rules.py has it
    already: a user who followed the page), so that the rule a test registers leaves with
    it and every other rule stays."""
    monkeypatch.setattr(rules, "RULES", dict(rules.RULES))
    rules.RULES.pop(_example_name(), None)
    return rules.RULES


@pytest.fixture
def example(registry):
    """The worked example's rule, registered from the page's python block; its name."""
    built_in = set(registry)
    exec(_example_blocks()["python"], dict(vars(rules)))  # as if written in rules.py
    (name,) = set(registry) - built_in
    return name


def _config_entry() -> tuple[str, dict]:
    (experiment,) = yaml.safe_load(_example_blocks()["yaml"])["experiments"].values()
    ((name, entry),) = experiment["optimizers"].items()
    return name, entry


def _config(entry: dict, name: str = "new") -> dict:
    return {"experiments": {"fig2": {"optimizers": {name: entry}}}}


# ---------------------------------------------------------------- the registry itself


def test_every_rule_reads_settings_of_the_spec():
    names = {f.name for f in fields(OptimizerSpec)}
    assert set(rules.SHARED) <= names
    for rule in rules.RULES.values():
        assert set(rule.settings) <= names - {"rule"}, rule.name


def test_the_kernel_implements_the_rules_that_say_so():
    """An entry's `kernel` is the one source: the C codes cover exactly those rules, each a
    gradient multiple (the kernel works in token coordinates)."""
    declared = {name for name, rule in rules.RULES.items() if rule.kernel}
    assert declared == set(kernel.RULE_CODES)
    assert all(rules.RULES[name].gradient_multiple for name in declared)
    for name in declared:
        assert kernel.supports(OptimizerSpec(name))


def test_the_schema_lists_no_rules_of_its_own():
    """The registry is the one list of rules: the schema takes any name, configcheck
    refuses the unknown ones (below)."""
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    optimizer = schema["$defs"]["optimizer"]
    assert optimizer["properties"]["rule"] == {
        "description": optimizer["properties"]["rule"]["description"],
        "type": "string",
    }
    assert "if" not in optimizer


def test_an_unknown_rule_is_refused_naming_its_key_path():
    with pytest.raises(configcheck.ConfigError) as err:
        configcheck.check_optimizers(_config({"rule": "sign-gd", "lr": 0.1}, "sgd"))
    assert err.value.key == "experiments.fig2.optimizers.sgd.rule"
    assert f"unknown rule 'sign-gd'; choose one of {', '.join(rules.RULES)}" in str(err.value)
    with pytest.raises(ValueError, match="unknown optimizer rule 'sign-gd'"):
        OptimizerSpec("sign-gd")


def test_the_example_is_unknown_until_registered(registry):
    """The negative control of the tests below: without its entry the name is refused."""
    name, entry = _config_entry()
    assert name not in rules.RULES
    with pytest.raises(configcheck.ConfigError, match=rf"optimizers\.{name}\.rule: unknown"):
        configcheck.check_optimizers(_config(entry, name))


# ---------------------------------------------------------------- the worked example


def test_the_example_passes_the_spec_and_the_config_checks(example):
    name, entry = _config_entry()
    assert entry["rule"] == example
    config = _config(entry, name)
    configcheck.check_optimizers(config)
    configcheck.check_specs(config)
    spec = OptimizerSpec.from_config(entry)
    assert spec.caption() == "loss-NGD lr=0.1"
    assert spec.reads("f_star") and spec.reads("momentum") and not spec.reads("eta_max")
    assert not kernel.supports(spec)


@pytest.mark.parametrize(("key", "value"), [("eta_max", 1.0), ("normalize", "per_block")])
def test_the_example_refuses_a_setting_it_ignores(example, key, value):
    name, entry = _config_entry()
    with pytest.raises(configcheck.ConfigError) as err:
        configcheck.check_optimizers(_config({**entry, key: value}, name))
    assert err.value.key == f"experiments.fig2.optimizers.{name}.{key}"
    assert f"rule {example} ignores {key}" in str(err.value)


def test_the_example_steps_as_computed_by_hand(example):
    """Two steps of W <- W - min(lr / L, max_step) (t + 1)^-decay_W grad (f* = 0), for two
    runs: the entry's step and the step factors every rule shares."""
    lr, decay = 0.1, 1.0
    spec = OptimizerSpec(example, lr=lr, f_star=0.0, max_step=0.5, decay_W=decay)
    direction = torch.tensor([[[1.0, -2.0], [0.5, 0.0]], [[0.0, 1.0], [3.0, -1.0]]], dtype=F64)
    scales = [0.5, 2.0]  # gradient = scale * direction, per run
    losses = [[0.5, 0.25], [1.0, 0.1]]  # L per run, at steps 0 and 1
    grad = ScaledGradient(
        torch.log(torch.tensor(scales, dtype=F64)),
        direction,
        torch.tensor([0.0, 0.0], dtype=F64),  # the norm: this rule never reads it
    )
    params = {"W": torch.zeros_like(direction)}
    optimizer = Optimizer(spec)
    expected = torch.zeros_like(direction)
    for t in range(2):
        loss = torch.tensor([run[t] for run in losses], dtype=F64)
        optimizer.step(params, {"W": grad}, lambda loss=loss: (loss.log(), torch.ones_like(loss)))
        for b in range(2):
            step = min(lr / losses[b][t], 0.5) * (t + 1) ** -decay  # run 1, t = 1: the cap
            expected[b] -= step * scales[b] * direction[b]
        torch.testing.assert_close(params["W"], expected, rtol=1e-15, atol=0)
    assert params["W"][1, 0, 1].item() == pytest.approx(-(0.1 + 0.25) * 2.0)  # capped at t = 1


def test_the_example_trains_on_torch(example):
    """A short run through the dispatcher, as the training job, study and sweeps call it: it
    goes to torch (the kernel lacks the rule) and says so; finite, the loss falls at every
    logged step, and the direction nears W_mm (gap_W is nan at W = 0)."""
    _, entry = _config_entry()
    ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
    solution = max_margin.to_arrays(max_margin.solve_for_dataset(ds, False, "test"))
    spec = OptimizerSpec.from_config(entry)
    table, final, record = dispatch.train_batch(
        [ds], spec, W_mm=solution["W_mm"][None], iterations=200, log_iterations=log_grid(200, 10)
    )
    assert record["backend"] == "torch"
    assert dispatch.backend("cpu", "float64", OptimizerSpec("ngd")) == "c"  # control
    assert np.isfinite(table["log_loss"]).all() and np.isfinite(final["W"]).all()
    assert (np.diff(table["log_loss"][0]) < 0).all()
    assert table["gap_W"][0, -1] < table["gap_W"][0, 1]


def test_the_kernel_refuses_the_example(example):
    ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
    with pytest.raises(ValueError, match=f"does not implement rule '{example}'"):
        kernel.train(
            TokenProblem([ds]),
            OptimizerSpec(example, f_star=0.0),
            iterations=1,
            log_iterations=np.array([0, 1]),
            W_mm=np.eye(10)[None],
        )
