"""The direction rules of attnbias.optim.rules (sign, nsd, muon, adam, mirror, kq): each
step against numbers computed by hand; the full-W path (training.full_matrix) against the
C kernel on GD and NGD; which backend a rule trains on, decided from what it declares; and
the extra_metrics hook on every backend.

The rules' registry (attnbias.optim.rules, one module per rule) and the worked example of
docs/layout.md, "Adding an optimizer": its module and config entry, read from that page,
make a rule that the spec, the config checks, the full-batch step and a torch run all
take.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import re
import types
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from saturated_gradients import assert_matches, oracle, saturated

from attnbias.claims import coverage
from attnbias.data import models
from attnbias.figures import algorithm_style
from attnbias.model.gradient_weights import ScaledGradient
from attnbias.optim import directions, rules
from attnbias.optim.directions import Block
from attnbias.optim.full_batch import Optimizer
from attnbias.optim.rule import SHARED
from attnbias.optim.spec import OptimizerSpec, spec_of
from attnbias.svm import max_margin
from attnbias.training import dispatch, full_matrix, kernel, loop, torch_loop
from attnbias.training.full_matrix import FullMatrixStepper
from attnbias.training.kernel import KernelStepper
from attnbias.training.metrics import log_grid
from attnbias.training.token_problem import TokenProblem
from attnbias.training.torch_loop import TorchStepper
from attnbias.workflow import configcheck_optimizers, configkeys


def test_every_rule_declares_its_implicit_norm():
    expected = {"gd": "fro", "ngd": "fro", "polyak": "fro", "sign": "max", "adam": "max",
                "muon": "spectral", "kq": "nuclear"}  # fmt: skip
    for name, norm in expected.items():
        assert OptimizerSpec(name).implicit_norm() == norm
    assert OptimizerSpec("nsd", norm="l1.5").implicit_norm() == "l1.5"
    assert OptimizerSpec("mirror", p=3.0).implicit_norm() == "l3"
    assert directions.descent_norm("l1.5") == ("lp", 1.5)


# ---------------------------------------------------------------- every rule, every backend

# the settings that make a rule's step of order one at the saturated state (lr of GD-like
# rules over the gradient's norm, Polyak's cap likewise, NGD normalised per block), so that
# W1 - W0 measures the direction; a rule not here steps at its module's examples (a new
# rule's, docs/layout.md). Polyak normalises globally only: with u trained, the u-gradient
# (of order one) sets its step, W's is of the size of e^-gap and only u's is compared (W's
# gradient is the one NGD's per-block step measures).
SCALED = {
    "gd": lambda g: dict(lr=math.exp(-g.log_norm_W), lr_u=math.exp(-g.log_norm_u)),
    "ngd": lambda g: dict(lr=1.0, normalize="per_block"),
    "polyak": lambda g: dict(eta_max=math.exp(-g.log_norm_W), f_star=0.0),
    "sign": lambda g: dict(lr=1.0),
    "nsd": lambda g: dict(lr=1.0),
    "muon": lambda g: dict(lr=1.0),
    "adam": lambda g: dict(lr=max(1.0, 1e-8 * math.exp(-g.log_norm_W)), lr_u=1.0),
    "mirror": lambda g: dict(lr=math.exp(-g.log_norm_W), lr_u=math.exp(-g.log_norm_u), p=3.0),
    "kq": lambda g: dict(lr=1e4 * math.exp(-g.log_norm_W), lr_u=math.exp(-g.log_norm_u)),
}


FULL_BATCH = [name for name, rule in rules.RULES.items() if rule.full_batch]


def test_the_scaled_settings_are_of_full_batch_rules():
    assert set(SCALED) <= set(FULL_BATCH)


def _settings(name: str, extra: dict):
    """The oracle test's settings of `name` at its module's example `extra`: its SCALED
    settings, where it has them, over the example's."""
    scaled = SCALED.get(name)
    return lambda g: {**extra, **(scaled(g) if scaled else {})}


EXTRA = {"nsd": [dict(norm="spectral"), dict(norm="l3")]}  # beyond its first example


def _specs():
    """(rule, settings): each full-batch rule at its module's first example, and EXTRA."""
    for name in FULL_BATCH:
        yield name, rules.RULES[name].examples[0]
        for extra in EXTRA.get(name, []):
            yield name, extra


def _backends(spec: OptimizerSpec) -> list[str]:
    names = ["full_matrix"]
    if spec.definition.gradient_multiple:
        names.append("torch")
    if kernel.supports(spec):
        names.append("kernel")
    return names


def _one_step(backend: str, ds: dict, spec: OptimizerSpec, train_u: bool) -> dict:
    d = ds["X"].shape[-1]
    common = dict(
        iterations=1, log_iterations=np.array([0, 1]), W_mm=np.eye(d)[None],
        u_mm=np.ones((1, d)) if train_u else None, train_u=train_u,
    )  # fmt: skip
    if backend == "torch":
        return loop.train(TorchStepper, torch_loop.problem_of([ds]), spec, **common)[1]
    stepper = KernelStepper if backend == "kernel" else FullMatrixStepper
    return loop.train(stepper, TokenProblem([ds]), spec, **common)[1]


def _oracle_step(ds, spec, train_u, gap, monkeypatch) -> dict:
    """The rule's first step on the full W with the oracle's gradient in place of ours."""

    def oracle_gradients(state, fwd):
        W, u = state.params["W"][0], state.params["u"][0]
        g = oracle(ds, "exponential", gap, W=W, u=u)
        grads = {"W": Block(np.array([g.log_norm_W]), None, g.left[None], state.basis)}
        if state.train_u:
            grads["u"] = Block(np.array([g.log_norm_u]), g.dir_u[None].copy())
        return grads

    with monkeypatch.context() as patch:
        patch.setattr(full_matrix.FullMatrixStepper, "gradients", oracle_gradients)
        return _one_step("full_matrix", ds, spec, train_u)


@pytest.mark.parametrize("train_u", [False, True], ids=["u fixed", "u trained"])
@pytest.mark.parametrize("gap", [5.0, 100.0, 700.0])
@pytest.mark.parametrize("name, extra", list(_specs()), ids=lambda v: str(v))
def test_every_rule_steps_as_with_the_oracle_gradient(name, extra, gap, train_u, monkeypatch):
    ds = saturated(gap, seed=2)
    g = oracle(ds, "exponential", gap)
    spec = OptimizerSpec(rule=name, **_settings(name, extra)(g))
    want = _oracle_step(ds, spec, train_u, gap, monkeypatch)
    want_W = want["W"][0] - ds["W0"]
    check_W = not (name == "polyak" and train_u)
    if check_W:  # a step we can measure
        assert np.linalg.norm(want_W) > 1e-6 * np.linalg.norm(ds["W0"])
    for backend in _backends(spec):
        got = _one_step(backend, ds, spec, train_u)
        got_W = np.asarray(got["W"])[0] - ds["W0"]
        if check_W:
            assert_matches(got_W, want_W / np.linalg.norm(want_W), f"{backend} {name} W step")
        if train_u:
            got_u, want_u = np.asarray(got["u"])[0] - ds["u"], want["u"][0] - ds["u"]
            assert_matches(got_u, want_u / np.linalg.norm(want_u), f"{backend} {name} u step")


ROOT = Path(__file__).resolve().parents[2]


F64 = torch.float64


def _example_blocks() -> dict[str, str]:
    """The code blocks of layout.md's "Adding an optimizer" section, by language."""
    text = (ROOT / "docs/layout.md").read_text()
    section = text.split("## Adding an optimizer", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"```(\w+)\n(.*?)```", section, flags=re.DOTALL))


def _example_name() -> str:
    """The rule name the page's python block defines."""
    return re.search(r'name="([^"]+)"', _example_blocks()["python"]).group(1)


@pytest.fixture
def registry(monkeypatch):
    """The registry as a copy without the page's example (whether or not rules/ has it
    already: a user who followed the page), so that the rule a test registers leaves with
    it and every other rule stays."""
    monkeypatch.setattr(rules, "RULES", dict(rules.RULES))
    rules.RULES.pop(_example_name(), None)
    return rules.RULES


@pytest.fixture
def example(registry):
    """The worked example's rule, its module read from the page's python block as the
    package reads a file of rules/; its name."""
    module = types.ModuleType("attnbias.optim.rules.loss_ngd")
    exec(_example_blocks()["python"], module.__dict__)
    registry[module.RULE.name] = module.RULE
    return module.RULE.name


def _config_entry() -> tuple[str, dict]:
    (experiment,) = yaml.safe_load(_example_blocks()["yaml"])["experiments"].values()
    ((name, entry),) = experiment["optimizers"].items()
    return name, entry


def _config(entry: dict, name: str = "new") -> dict:
    return {"experiments": {"fig2": {"optimizers": {name: entry}}}}


# ---------------------------------------------------------------- the registry itself


def test_every_rule_reads_settings_of_the_spec():
    names = {f.name for f in fields(OptimizerSpec)}
    assert set(SHARED) <= names
    for rule in rules.RULES.values():
        assert set(rule.settings) <= names - {"rule"}, rule.name


def test_each_rule_is_one_module_whose_update_is_its_own():
    """rules/<name>.py defines RULE, and the rule's full-batch update is written in that
    module; the registry knows each rule's module (MODULES: the jobs' code inputs)."""
    assert set(rules.MODULES) == set(rules.RULES)
    for name, rule in rules.RULES.items():
        module = importlib.import_module(rules.MODULES[name])
        assert module.RULE is rule, name
        assert Path(module.__file__).name == f"{name.replace('-', '_')}.py"
        if rule.full_batch:
            assert inspect.getmodule(rule.log_step or rule.update) is module, name


def test_the_views_are_read_from_the_modules():
    """The claims' algorithm names, the figures' looks and the algorithm of a config entry:
    every key a rule runs as has its name and its look in the rule's module."""
    names = {k: v for r in rules.RULES.values() for k, v in r.names.items()}
    assert coverage.ALGORITHMS == names
    coloured = algorithm_style.FAMILY_COLOURS  # a new family's looks: per figure (figure_looks)
    assert set(algorithm_style.STYLES) == {
        k for r in rules.RULES.values() for k, look in r.looks.items() if look.family in coloured
    }
    assert _algorithms_run(FULL_BATCH) == {k for n in FULL_BATCH for k in rules.RULES[n].names}
    on_torch = [n for n, r in rules.RULES.items() if r.torch is not None]
    for name in on_torch:  # a real-data run: drawn and named as its rule's name
        spec = spec_of({"rule": name}, real=True)
        assert spec.look_key(None) in rules.RULES[name].looks
        assert spec.algorithm(None) in rules.RULES[name].names


def _algorithms_run(names) -> set[str]:
    """The algorithms the rules `names` run as at their modules' examples, in both layouts
    that tell them apart; each must be named and drawn by its module."""
    seen = set()
    for name in names:
        for example in rules.RULES[name].examples:
            entry = {"rule": name, **example}
            spec = spec_of(entry, real=False)
            for layout in ("fixed_decoder", "joint"):
                key = spec.algorithm(layout)
                assert key in rules.RULES[name].names, (entry, layout)
                assert spec.look_key(layout) in rules.RULES[name].looks
                seen.add(key)
    return seen


def test_an_algorithm_no_example_reaches_is_caught(monkeypatch):
    """The control of the view above: a name its module's examples never reach."""
    ngd = rules.RULES["ngd"]
    monkeypatch.setitem(rules.RULES, "ngd", dataclasses.replace(ngd, examples=({},)))
    assert _algorithms_run(["ngd"]) != set(ngd.names)


def _registry_of(tmp_path, package: str, files: dict[str, str]):
    """A copy of the registry's package (its __init__) holding `files`, imported."""
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text(Path(rules.__file__).read_text())
    for name, text in files.items():
        (tmp_path / package / name).write_text(text)
    return importlib.import_module(package)


def test_a_module_without_a_rule_and_a_name_defined_twice_are_refused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    gd = "from attnbias.optim.rules.gd import RULE\n"
    assert list(_registry_of(tmp_path, "one_rule", {"gd.py": gd}).RULES) == ["gd"]  # control
    with pytest.raises(ValueError, match="rules/helper.py defines no RULE"):
        _registry_of(tmp_path, "with_helper", {"gd.py": gd, "helper.py": "X = 1\n"})
    with pytest.raises(ValueError, match="optimizer rule 'gd' is defined twice"):
        _registry_of(tmp_path, "twice", {"gd.py": gd, "gd_again.py": gd})


def test_the_kernel_implements_the_rules_that_say_so():
    """A module's `kernel_code` is the one source: the C codes are exactly those, each of a
    gradient multiple (the kernel works in token coordinates)."""
    declared = {n: r.kernel_code for n, r in rules.RULES.items() if r.kernel_code is not None}
    assert declared == kernel.RULE_CODES and set(declared) == {"gd", "ngd", "polyak"}
    assert len(set(declared.values())) == len(declared)
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
    with pytest.raises(configkeys.ConfigError) as err:
        configcheck_optimizers.check_optimizers(_config({"rule": "sign-gd", "lr": 0.1}, "sgd"))
    assert err.value.key == "experiments.fig2.optimizers.sgd.rule"
    assert f"unknown rule 'sign-gd'; choose one of {', '.join(FULL_BATCH)}" in str(err.value)
    with pytest.raises(ValueError, match="unknown optimizer rule 'sign-gd'"):
        OptimizerSpec("sign-gd")


def test_the_example_is_unknown_until_registered(registry):
    """The negative control of the tests below: without its entry the name is refused."""
    name, entry = _config_entry()
    assert name not in rules.RULES
    with pytest.raises(configkeys.ConfigError, match=rf"optimizers\.{name}\.rule: unknown"):
        configcheck_optimizers.check_optimizers(_config(entry, name))


# ---------------------------------------------------------------- the worked example


def test_the_example_passes_the_spec_and_the_config_checks(example):
    name, entry = _config_entry()
    assert entry["rule"] == example
    config = _config(entry, name)
    configcheck_optimizers.check_optimizers(config)
    configcheck_optimizers.check_specs(config)
    spec = spec_of(entry, real=False)
    assert spec.caption() == "loss-NGD lr=0.1"
    assert spec.reads("f_star") and spec.reads("momentum") and not spec.reads("eta_max")
    assert not kernel.supports(spec)


@pytest.mark.parametrize(("key", "value"), [("eta_max", 1.0), ("normalize", "per_block")])
def test_the_example_refuses_a_setting_it_ignores(example, key, value):
    name, entry = _config_entry()
    with pytest.raises(configkeys.ConfigError) as err:
        configcheck_optimizers.check_optimizers(_config({**entry, key: value}, name))
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
    spec = spec_of(entry, real=False)
    table, final, record = dispatch.train(
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
        loop.train(
            KernelStepper,
            TokenProblem([ds]),
            OptimizerSpec(example, f_star=0.0),
            iterations=1,
            log_iterations=np.array([0, 1]),
            W_mm=np.eye(10)[None],
        )


@pytest.mark.parametrize("script", ["train.py", "figure.py", "geometry_figure.py", "claims.py"])
def test_a_rule_module_is_a_code_input_of_the_jobs_that_train_with_it_only(script):
    """The registry imports its modules by file name, which no import statement shows
    (the control): no script's code lists them, and a job that trains with a rule lists
    that rule's module and what it imports (codedeps.rule_files, JobParams.rule_code), so
    adding or editing a rule reruns its jobs alone (tests/project/test_snakefile_build.py)."""
    from attnbias.workflow import codedeps

    files = set(codedeps.module_files(str(ROOT / "workflow/scripts" / script)))
    modules = {str(p) for p in Path(rules.__file__).parent.glob("*.py")}
    assert len(modules) == len(rules.RULES) + 1
    assert modules & files == {rules.__file__}  # the registry, not its modules
    static = codedeps._imported_modules(Path(rules.__file__))
    assert not {m for m in static if m.startswith("attnbias.optim.rules.")}  # the control
    adam = set(codedeps.rule_files(["adam"]))
    assert {str(ROOT / "src/attnbias/optim/rules/adam.py"), directions.__file__} <= adam
    assert not adam & (modules - {rules.__file__, str(ROOT / "src/attnbias/optim/rules/adam.py")})
    assert codedeps.rule_files(["gd", "gd"]) == codedeps.rule_files(["gd"])
