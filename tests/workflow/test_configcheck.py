"""The config checks (attnbias.workflow.configcheck): a bad config refused by key path."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
import yaml
from tiny_configs import HOSTILE, NAN, load_schema, tiny

from attnbias.workflow import configcheck, configkeys

# ---------------------------------------------------------------- config: refused by key


def test_config_checks_name_the_key_path_directly():
    config = tiny()
    config["experiments"]["fig3"]["optimizers"]["ps"]["f_star"] = NAN
    with pytest.raises(configkeys.ConfigError, match=r"experiments\.fig3\.optimizers\.ps\.f_star"):
        configcheck.check_finite(config)
    assert (
        configkeys.key_path(("global_convergence", "scales", 1)) == "global_convergence.scales[1]"
    )


def test_binary_digits_of_one_class_are_refused_naming_the_key():
    schema = load_schema()
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


def test_the_config_checks_run_the_markup_check_first():
    config = tiny()
    config["experiments"]["fig2"]["optimizers"]["gd"]["label"] = HOSTILE
    schema = load_schema()
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


# ------------------------------------------------ cross-attention: the queries Z (model.queries)


def test_a_setting_that_needs_queries_is_refused_on_a_data_model_without_them():
    """example1 carries no queries: the setting is refused naming its key and the model,
    and offers the models that do (the neighbours' cross_gaussian)."""
    path = ("experiments", "fig2", "cross_attention")
    with pytest.raises(configkeys.ConfigError) as refused:
        configcheck.require_queries(path, "example1", {"n": 4})
    message = str(refused.value)
    assert message.startswith("config key experiments.fig2.cross_attention: needs queries Z")
    assert "'example1' has none" in message
    assert "(cross_gaussian)" in message


def test_a_data_model_that_declares_queries_passes(monkeypatch):
    """The control: a model whose registry entry declares queries (or whose params say so)
    passes, and is offered in the refusal of another."""
    from attnbias.data import models

    example1 = models.DATA_MODELS["example1"]
    declared = {
        "with_z": dataclasses.replace(example1, queries=True),
        "maybe_z": dataclasses.replace(example1, queries=lambda params: params.get("cross")),
    }
    monkeypatch.setattr(models, "DATA_MODELS", {**models.DATA_MODELS, **declared})
    monkeypatch.setattr(models, "MODELS", sorted(models.DATA_MODELS))
    configcheck.require_queries(("k",), "with_z", {})
    configcheck.require_queries(("k",), "maybe_z", {"cross": True})
    with pytest.raises(
        configkeys.ConfigError, match=r"config key k: .*\(cross_gaussian, maybe_z, with_z\)"
    ):
        configcheck.require_queries(("k",), "maybe_z", {"cross": False})


# ---------------------------------------------------------------- keys and defaults (issue 61)


@pytest.mark.parametrize(
    ("key", "written"), [(1, "1"), (None, "null"), (True, "true"), (1.5, "1.5")]
)
@pytest.mark.parametrize("where", ["experiments", "optimizers"])
def test_a_key_yaml_reads_as_no_text_is_refused_with_its_quoted_spelling(key, written, where):
    """An experiment or optimizer named 1 or null reached common.smk's wildcard constraints
    and died there with a TypeError; the advice, followed, clears the refusal."""
    config = tiny()
    section = config["experiments"]
    if where == "optimizers":
        section = section["fig2"]["optimizers"]
    section[key] = section.pop(next(iter(section)))
    path = "experiments" if where == "experiments" else r"experiments\.fig2\.optimizers"
    with pytest.raises(
        configkeys.ConfigError,
        match=rf"config key {path}: the key {written} is read by YAML as .*, not as a name: "
        rf"write it in quotes, '{written}'",
    ):
        configcheck.check_keys(config)
    section[written] = section.pop(key)  # the advice followed
    configcheck.check_keys(config)


def test_nesting_past_the_depth_limit_is_refused_by_key_path_without_recursion():
    config = tiny()
    deep = []
    config["extra"] = deep
    for _ in range(5000):  # far past Python's recursion limit: the check is iterative
        deep.append([])
        deep = deep[0]
    with pytest.raises(
        configkeys.ConfigError, match=r"config key extra\[0\].*: nested more than 32"
    ):
        configcheck.check_keys(config)
    config["extra"] = [[[]]]  # the control: shallow nesting passes this check
    configcheck.check_keys(config)


def test_a_default_the_schema_refuses_is_refused_by_key_like_the_value_written():
    """`data: {model: example1}` gets Snakemake's default `params: {}`, which lacks n: it
    was a 45-line schema dump from Snakemake's validation; now the key, as for `params: {}`."""
    schema = load_schema()
    for params in (None, {}):
        config = tiny()
        data = config["experiments"]["fig2"]["data"]
        data.pop("params")
        if params is not None:
            data["params"] = params
        with pytest.raises(
            configkeys.ConfigError,
            match=r"^config key experiments\.fig2\.data\.params: 'n' is a required property$",
        ):
            configcheck.validate(config, schema)
        assert "params" not in data or data["params"] == {}  # the config is not filled in
    config = tiny()
    configcheck.validate(config, schema)
    assert config == tiny()  # a valid config: neither filled in nor changed
    assert schema == load_schema()  # the defaults filled in were copies


def test_a_key_needed_but_not_written_is_refused_as_required_not_as_its_default():
    """binary_digits from MNIST without `root`: its default (null) was filled in before the
    check, which read "None is not of type 'string'"; it says the key is required. The
    controls: a root written is accepted, and a root written as null is refused as the
    value written."""
    schema = load_schema()
    config = tiny()
    params = {"n": 40, "T": 4, "noise": 0.1, "source": "mnist", "digits": [0, 1]}
    config["experiments"]["fig9"]["data"]["params"] = params
    key = r"^config key experiments\.fig9\.data\.params\.root: "
    with pytest.raises(configkeys.ConfigError, match=key + "required here, and not set"):
        configcheck.validate(config, schema)
    params["root"] = "data/mnist"
    configcheck.validate(config, schema)  # the control
    params["root"] = None
    with pytest.raises(configkeys.ConfigError, match=key + "None is not of type 'string'$"):
        configcheck.validate(config, schema)
