"""docs/layout.md's recipe for an optimizer of the real-data runs, followed as written: one
file (the page's Adagrad module), one config line. The file and the line go into a copy of
the project, nothing else is edited; the workflow builds the tiny fig6 (a ViT on fixture
MNIST) with Adagrad in it, and the optimizer tests (tests/optim) pass in the copy, whose
registry now holds it. In-process, the page's module is registered in copies of the
registry: its torch optimizer steps as computed by hand, it takes a colour no family of
its figure holds, and a module missing what its regime needs is refused naming it."""

from __future__ import annotations

import dataclasses
import importlib
import re
import shutil
import sys
import types
from pathlib import Path

import pytest
import torch
import yaml
from fixtures_vision import write_mnist
from optimizer_recipe import add_rule, differences, recipe_tests_pass, section_blocks
from project import REPO, copy_project, snakemake
from write_fixtures import SIZES

from attnbias.figures.algorithm_style import FAMILY_COLOURS, algorithms_of, figure_looks
from attnbias.optim import rules, stochastic
from attnbias.optim.rule import TorchOptimizer
from attnbias.optim.spec import OptimizerSpec, resolve, spec_of
from attnbias.workflow import configcheck_optimizers
from attnbias.workflow.configkeys import ConfigError

CONFIG = "config/tiny.yaml"
RESULTS = "results-tiny"
FIGURE = "fig6"


SOURCE = section_blocks()["python3"]  # the module
LINE = section_blocks()["YAML"].strip()  # its config line
NAME = re.search(r'name="([^"]+)"', SOURCE).group(1)
MODULE = f"attnbias.optim.rules.{NAME}"
FILE = f"src/attnbias/optim/rules/{NAME}.py"


def _module(source: str = SOURCE) -> types.ModuleType:
    module = types.ModuleType(MODULE)
    exec(compile(source, FILE, "exec"), module.__dict__)
    return module


@pytest.fixture
def registered(monkeypatch):
    """The page's module in copies of the registry (RULES, MODULES) and of OPTIMIZERS, as
    the package would load its file."""
    rule = _module().RULE
    monkeypatch.setattr(rules, "RULES", {**rules.RULES, NAME: rule})
    monkeypatch.setattr(rules, "MODULES", {**rules.MODULES, NAME: MODULE})
    monkeypatch.setattr(stochastic, "OPTIMIZERS", stochastic._torch_optimizers())
    return rule


def test_its_step_as_computed_by_hand(registered):
    """Two Adagrad steps: G sums g^2, p <- p - lr g / (sqrt(G) + eps)."""
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))
    spec = spec_of(yaml.safe_load(LINE)[NAME], real=True)
    optimizer = stochastic.make_optimizer(spec.rule, [p], **spec.settings)
    assert type(optimizer) is torch.optim.Adagrad and spec.caption() == "Adagrad lr=0.05"
    grads = [torch.tensor([0.5, -1.0, 2.0]), torch.tensor([-1.5, 1.0, 0.0])]
    want, total = p.detach().clone(), torch.zeros(3, dtype=torch.float64)
    for g in grads:
        p.grad = g.to(torch.float64)
        optimizer.step()
        total += g.to(torch.float64) ** 2
        want -= 0.05 * g.to(torch.float64) / (total.sqrt() + 1e-10)  # torch's eps default
    torch.testing.assert_close(p.detach(), want, rtol=1e-12, atol=1e-15)


def test_the_config_checks_read_its_module(registered):
    """Its declared settings and their schemas: a key it does not declare and a value
    its schema refuses are refused naming the key; a synthetic experiment refuses it."""
    path = "real_data.experiments.fig6.optimizers.ada"

    def real(entry):
        return {"real_data": {"experiments": {"fig6": {"optimizers": {"ada": entry}}}}}

    configcheck_optimizers.check_real_optimizers(real({"rule": NAME, "lr": 0.05}))  # control
    with pytest.raises(ConfigError, match=rf"{path}\.momentum: rule {NAME} takes no setting"):
        configcheck_optimizers.check_real_optimizers(real({"rule": NAME, "momentum": 0.9}))
    with pytest.raises(ConfigError, match=rf"{path}\.lr: -1 is less than or equal"):
        configcheck_optimizers.check_real_optimizers(real({"rule": NAME, "lr": -1}))
    synthetic = {"experiments": {"fig2": {"optimizers": {"ada": {"rule": NAME}}}}}
    with pytest.raises(ConfigError, match=f"rule {NAME} does not train full-batch"):
        configcheck_optimizers.check_optimizers(synthetic)
    with pytest.raises(ValueError, match=f"rule {NAME} runs on torch parameters only"):
        OptimizerSpec(NAME)


def test_a_module_missing_what_its_regime_needs_is_refused_naming_it(
    registered, monkeypatch, tmp_path
):
    """No update of either regime (read by a copy of the registry's package); a class that
    is not there; a setting that is no keyword of its constructor: each refused, the
    module named."""
    package = tmp_path / "registry_copy"
    package.mkdir()
    shutil.copy2(rules.__file__, package / "__init__.py")
    (package / f"{NAME}.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert NAME in importlib.import_module("registry_copy").RULES  # the control
    broken = SOURCE.replace("torch=TorchOptimizer(", "torch=None and TorchOptimizer(")
    (package / f"{NAME}.py").write_text(broken)
    for name in [m for m in sys.modules if m.startswith("registry_copy")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ValueError, match=rf"module rules/{NAME}\.py: rule '{NAME}': give"):
        importlib.import_module("registry_copy")
    for broken in (
        TorchOptimizer("torch.optim:Adagradd", {"lr": {}}),
        TorchOptimizer("torch.optim:Adagrad", {"lr": {}, "beta": {}}),
    ):
        rule = dataclasses.replace(registered, torch=broken)
        monkeypatch.setitem(rules.RULES, NAME, rule)
        with pytest.raises(ValueError, match=f"optimizer module {MODULE}: "):
            stochastic._torch_optimizers()


def test_a_new_family_takes_a_free_colour(registered):
    assert registered.looks[NAME].family not in FAMILY_COLOURS  # no table edited
    config = yaml.safe_load((REPO / CONFIG).read_text())
    optimizers = config["real_data"]["experiments"][FIGURE]["optimizers"]
    optimizers = {**optimizers, **yaml.safe_load(LINE)}
    looks = figure_looks(algorithms_of(resolve(optimizers, real=True), None))
    assert looks[NAME].colour not in {lk.colour for o, lk in looks.items() if o != NAME}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    workdir = copy_project(tmp_path_factory.mktemp("new_stochastic_rule"))
    add_rule(workdir, FILE, SOURCE, CONFIG, f"    {FIGURE}:", LINE)  # real_data's figure
    n_train, n_test, seed = SIZES["mnist"]
    write_mnist(workdir / "fixtures" / "data", n_train=n_train, n_test=n_test, seed=seed)
    snakemake(workdir, f"{RESULTS}/{FIGURE}.pdf", "-c2", "-q", config=CONFIG)
    return workdir


@pytest.mark.slow
def test_nothing_else_is_edited(built):
    assert differences(built, CONFIG) == ({Path(FILE)}, set(), [f"        {LINE}"])


@pytest.mark.slow
def test_the_figure_trains_and_draws_it(built):
    caption = (built / RESULTS / f"{FIGURE}.caption.md").read_text()
    label = yaml.safe_load(LINE)[NAME]["label"]
    assert label in caption and "Adagrad lr=0.05" in caption
    runs = sorted((built / RESULTS / "train" / FIGURE / NAME).glob("seed*.parquet"))
    assert runs and all(run.stat().st_size > 0 for run in runs)


@pytest.mark.slow
def test_the_optimizer_tests_pass_with_it_in_the_registry(built):
    """With Adagrad added as the page says and nothing else, tests/optim and the page's index
    of the tree pass in the copy (optimizer_recipe.RECIPE_TESTS)."""
    recipe_tests_pass(built, NAME)
