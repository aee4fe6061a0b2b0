"""Every default has one home, and what restates it agrees.

- Each default the schema names (a `default:` key, or "(default x)" in a description) for a
  data model's params, an optimizer rule's settings (synthetic, and on torch parameters the
  schemas each rule module declares) or a train setting equals the default of the function
  that uses it (its signature).
- The config checks that read a default (the opt/query signal check, the study's score
  spread) take it from the function: a config relying on it passes where valid and is
  refused, naming the key, where not.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from pathlib import Path

import pytest
import yaml
from tiny_configs import SCHEMA

from attnbias.data import models
from attnbias.optim import rules, stochastic
from attnbias.optim.spec import OptimizerSpec
from attnbias.training import loop, metrics
from attnbias.workflow import configcheck, configcheck_optimizers, configkeys

REPO = Path(__file__).resolve().parents[2]
DEFS = SCHEMA["$defs"]
STATED = re.compile(r"\(default:? ([^)]+)\)")
MISSING = "(no default)"


def stated_defaults(properties: dict) -> list[tuple[str, object]]:
    """(key, value) for each default that the schema's properties state."""
    found = []
    for key, prop in properties.items():
        if "default" in prop:
            found.append((key, prop["default"]))
        for text in STATED.findall(prop.get("description", "")):
            found.append((key, yaml.safe_load(text)))
    return found


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def disagreements(properties: dict, defaults: dict) -> list[str]:
    return [
        f"{key}: the schema says {value!r}, the function {defaults.get(key, MISSING)!r}"
        for key, value in stated_defaults(properties)
        if key not in defaults or _plain(defaults[key]) != _plain(value)
    ]


def keyword_defaults(function) -> dict:
    parameters = inspect.signature(function).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not p.empty}


def _sections():
    """(name, schema properties, the function's defaults) for every section that has one."""
    for model in models.MODELS:
        yield (
            model,
            DEFS[f"{model}_params"]["properties"],
            models.keyword_defaults(models.generator(model)),
        )
    study = DEFS["global_convergence"]["properties"]
    knobs = models.keyword_defaults(models.perturbed_example1)
    yield "study data", study["data"]["properties"], knobs
    yield "study settings", study["settings"]["additionalProperties"]["properties"], knobs
    spec = {f.name: f.default for f in dataclasses.fields(OptimizerSpec) if f.init}
    yield "optimizer", DEFS["optimizer"]["properties"], spec
    for rule in stochastic.OPTIMIZERS:  # the schemas its module declares
        constructor = stochastic.OPTIMIZERS[rule].__init__
        yield f"real {rule}", rules.RULES[rule].torch.settings, keyword_defaults(constructor)
    train = DEFS["experiment"]["properties"]["train"]["properties"]
    settings = {
        **keyword_defaults(loop.train),
        "grid": keyword_defaults(metrics.log_grid)["spacing"],
    }
    # log_points has no function default: the schema's is its only statement
    yield "train", {k: v for k, v in train.items() if k != "log_points"}, settings


SECTIONS = list(_sections())


@pytest.mark.parametrize("name, properties, defaults", SECTIONS, ids=[s[0] for s in SECTIONS])
def test_the_schema_states_the_functions_defaults(name, properties, defaults):
    assert disagreements(properties, defaults) == []


def test_every_data_model_and_optimizer_rule_is_covered():
    names = {s[0] for s in SECTIONS}
    assert set(models.MODELS) <= names
    assert {f"real {rule}" for rule in stochastic.OPTIMIZERS} <= names


def test_a_stale_default_in_the_schema_is_flagged():
    """Negative control: a stale "(default 0.5)" in a description, and a `default:` key."""
    properties = copy.deepcopy(DEFS["example1_params"]["properties"])
    properties["query_signal"]["description"] += " (default 0.5)"
    properties["opt_signal"]["default"] = 2.0
    found = disagreements(properties, models.keyword_defaults(models.example1))
    assert found == [
        "opt_signal: the schema says 2.0, the function 1.0",
        "query_signal: the schema says 0.5, the function 0.0",
    ]
    required = {"n": {"description": "size (default 3)"}}
    assert disagreements(required, {}) == [f"n: the schema says 3, the function {MISSING!r}"]


# ---- the checks that read a default ----------------------------------------------------


def config_without(section: list, key: str, **values) -> dict:
    """The default config with `key` removed at `section` and `values` set there."""
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    place = config
    for name in section:
        place = place[name]
    place.pop(key, None)
    place.update(values)
    return config


def check(config):
    configcheck.check(config, SCHEMA)


FIG2 = ["experiments", "fig2", "data", "params"]
FIG2_QUERY = r"experiments\.fig2\.data\.params\.query_signal"


def test_the_query_signal_default_lets_a_low_opt_signal_pass():
    """opt_signal 0.3 and no query_signal (example1's default, 0.0) is valid."""
    assert models.keyword_defaults(models.example1)["query_signal"] < 0.3
    check(config_without(FIG2, "query_signal", opt_signal=0.3))


def test_the_query_signal_default_refuses_an_opt_signal_below_it():
    with pytest.raises(configkeys.ConfigError, match=FIG2_QUERY):
        check(config_without(FIG2, "query_signal", opt_signal=-0.1))


def test_the_opt_signal_default_bounds_a_query_signal():
    check(config_without(FIG2, "opt_signal", query_signal=0.9))
    with pytest.raises(configkeys.ConfigError, match="below opt_signal \\(1.0\\)"):
        check(config_without(FIG2, "opt_signal", query_signal=1.0))


def test_the_bad_direction_model_reads_example1s_defaults():
    fig8 = ["experiments", "fig8_random", "data", "params"]
    check(config_without(fig8, "query_signal", opt_signal=0.3))
    with pytest.raises(configkeys.ConfigError, match=r"fig8_random\.data\.params\.query_signal"):
        check(config_without(fig8, "query_signal", opt_signal=-0.1))


def test_the_study_score_spread_reads_the_default_opt_signal():
    study = ["global_convergence", "data"]
    config = config_without(study, "opt_signal")
    config["global_convergence"]["settings"]["spread09"] = {"score_spread": 0.99}
    check(config)
    config["global_convergence"]["settings"]["spread09"] = {"score_spread": 1.0}
    with pytest.raises(
        configkeys.ConfigError, match=r"global_convergence\.settings\.spread09\.score_spread"
    ):
        check(config)


def test_the_f_star_default_is_refused_where_u_is_trained_and_passes_where_fixed():
    """OptimizerSpec's f_star default ("opt") needs a fixed decoder: fig3 trains u."""
    assert OptimizerSpec("polyak").f_star == "opt"
    fig3 = config_without(["experiments", "fig3", "optimizers", "ps"], "f_star")
    with pytest.raises(configkeys.ConfigError, match=r"experiments\.fig3\.optimizers\.ps: f_star"):
        configcheck_optimizers.check_specs(fig3)
    fig2 = config_without(["experiments", "fig2_uncapped", "optimizers", "ps"], "f_star")
    configcheck_optimizers.check_specs(fig2)


def test_the_train_u_default_is_the_trainers():
    """An experiment without train.train_u has a fixed decoder (loop.train's default), so
    lr_u there is refused as for train_u: false."""
    config = config_without(["experiments", "fig3", "optimizers", "ngd"], "lr_u", lr_u=0.1)
    check(config)  # fig3 sets train_u: true
    del config["experiments"]["fig3"]["train"]["train_u"]
    with pytest.raises(configkeys.ConfigError, match=r"fig3\.optimizers\.ngd\.lr_u"):
        check(config)
