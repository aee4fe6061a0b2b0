"""docs/layout.md's recipe for a new optimizer, followed as written: one file (the page's
signum module), one config line, its test. The file and the line go into a copy of the
project, nothing else is edited, and the workflow builds the tiny geometry figure and the
claims table with the new rule in them; the optimizer tests and the layout page's index
pass in the copy."""

from __future__ import annotations

import re
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from optimizer_recipe import add_rule, differences, recipe_tests_pass, section_blocks
from project import checked_config, copy_project, snakemake

from attnbias.figures.algorithm_style import algorithms_of, figure_looks
from attnbias.optim import rules
from attnbias.optim.directions import Block
from attnbias.optim.spec import OptimizerSpec, resolve
from attnbias.workflow.config import WorkflowConfig
from attnbias.workflow.geometry_config import GeometryConfig

CONFIG = "config/tiny_geometry.yaml"
RESULTS = "results-tiny-geometry"
EXPERIMENT = "geometry_dm"  # W and u trained: the claims' optimal-token rows read every rule


SOURCE = section_blocks()["py"]  # the module
LINE = section_blocks()["yml"].strip()  # its config line
NAME = re.search(r'name="([^"]+)"', SOURCE).group(1)
FILE = f"src/attnbias/optim/rules/{NAME}.py"


@pytest.fixture
def registered(monkeypatch):
    """The page's module loaded as the package would load its file, in a copy of RULES."""
    module = types.ModuleType(f"attnbias.optim.rules.{NAME}")
    exec(compile(SOURCE, FILE, "exec"), module.__dict__)
    monkeypatch.setattr(rules, "RULES", {**rules.RULES, NAME: module.RULE})
    return module.RULE


def test_its_step_as_computed_by_hand(registered):
    """Two steps of M <- beta M + (1 - beta) G, W <- W - lr sign(M), on two runs whose
    gradients are e^-800 G~ (far below the smallest float): the momentum turns the sign
    of an entry only once the new gradient outweighs beta M."""
    spec = OptimizerSpec(NAME, lr=0.1, beta=0.5)
    G0 = np.array([[[1.0, -2.0], [0.0, 3.0]], [[1.0, 1.0], [1.0, 1.0]]])
    G1 = np.array([[[-3.0, -1.0], [1.0, -1.0]], [[-0.25, -2.0], [0.0, 1.0]]])
    params = {"W": np.zeros((2, 2, 2))}
    update = registered.update(spec, params, [0, 0])
    for t, G in enumerate((G0, G1)):
        update.step(t, params, {"W": Block(np.full(2, -800.0), G.copy())})
    M = 0.5 * 0.5 * G0 + 0.5 * G1  # M_1 (its scale e^-800 aside)
    np.testing.assert_array_equal(params["W"], -0.1 * np.sign(G0) - 0.1 * np.sign(M))
    assert spec.caption() == "signum beta=0.5 lr=0.1" and spec.implicit_norm() == "max"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    workdir = copy_project(tmp_path_factory.mktemp("new_rule"))
    add_rule(workdir, FILE, SOURCE, CONFIG, f"  {EXPERIMENT}:", LINE)
    snakemake(
        workdir, f"{RESULTS}/geometry.pdf", f"{RESULTS}/claims.md", "-c2", "-q", config=CONFIG
    )
    return workdir


def test_nothing_else_is_edited(built):
    """The copy differs from the project only by the new file and one config line."""
    assert differences(built, CONFIG) == ({Path(FILE)}, set(), [f"      {LINE}"])


def test_the_figure_draws_it_in_its_familys_colour_with_a_look_of_its_own(built, registered):
    caption = (built / RESULTS / "geometry.caption.md").read_text()
    label = yaml.safe_load(LINE)[NAME]["label"]
    assert label in caption and (built / RESULTS / "geometry.png").stat().st_size > 0
    # the looks the figure job gave (workflow/scripts/geometry_figure.py), read here
    config = yaml.safe_load((built / CONFIG).read_text())
    checked_config(config)  # the workflow's checks, its defaults filled in
    figure = GeometryConfig(WorkflowConfig(config)).figure()
    keys = {
        o: k
        for e in figure.values()
        for o, k in algorithms_of(resolve(e["optimizers"], real=False), "geometry").items()
    }
    looks = figure_looks(keys)
    assert looks[NAME].colour == looks["sign"].colour  # sign descent's family: its colour
    assert (looks[NAME].marker, looks[NAME].dashes) != (looks["sign"].marker, looks["sign"].dashes)
    assert len(set(looks.values())) == len(looks)


def test_the_claims_table_names_it_as_its_module_does(built, registered):
    """Its one row: a trained decoder's optimal tokens (every rule's); no published result
    on its margin covers it (claims.beyond), so it has no other."""
    table = pd.read_csv(built / RESULTS / "claims.csv")
    mine = table[table["key"].str.contains(f" {NAME} ")]
    assert list(mine["key"]) == [f"{EXPERIMENT} {NAME} optimal tokens kept"]
    assert mine["algorithm"].item() == registered.names[NAME]
    assert mine["outcome"].item() in ("holds", "does not hold")


@pytest.mark.slow
def test_the_optimizer_tests_pass_with_it_in_the_registry(built):
    """With signum added as the page says and nothing else, tests/optim and the page's index
    of the tree pass in the copy (optimizer_recipe.RECIPE_TESTS)."""
    recipe_tests_pass(built, NAME)
