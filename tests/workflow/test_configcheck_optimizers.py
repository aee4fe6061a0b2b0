"""The real-data optimizers' config checks, read from the rule modules (Rule.torch): a rule
must run on torch parameters, a setting must be one its module declares, and its value must
pass the schema the module gives it; a torch-only rule is refused in a synthetic
experiment. Each refusal names its key path."""

from __future__ import annotations

import copy

import pytest
from jsonschema import Draft202012Validator
from tiny_configs import tiny

from attnbias.optim import rules, stochastic
from attnbias.workflow.configcheck_optimizers import check_optimizers, check_real_optimizers
from attnbias.workflow.configkeys import ConfigError

PATH = "real_data.experiments.fig6.optimizers"


def _real(**entry) -> dict:
    config = tiny()
    config["real_data"]["experiments"]["fig6"]["optimizers"]["x"] = entry
    return config


def test_the_tiny_configs_optimizers_pass():
    check_real_optimizers(tiny())  # the control of the refusals below
    check_optimizers(tiny())


@pytest.mark.parametrize(
    ("entry", "key", "message"),
    [
        (dict(rule="gd", lr=0.1), "rule", "rule gd does not train on torch parameters"),
        (dict(rule="lbfgs"), "rule", "unknown rule .lbfgs.; choose one of adam, sgd, sngd, sps"),
        (dict(rule="sgd", betas=[0.9, 0.99]), "betas", "rule sgd takes no setting 'betas'"),
        (dict(rule="sngd", max_step=0), "max_step", "0 is less than or equal to the minimum"),
        (dict(rule="adam", betas=[0.9]), "betas", "is too short"),
        (dict(rule="sgd", nesterov=1), "nesterov", "1 is not of type 'boolean'"),
    ],
)
def test_a_bad_real_data_optimizer_is_refused_naming_its_key(entry, key, message):
    with pytest.raises(ConfigError, match=message) as err:
        check_real_optimizers(_real(label="X", **entry))
    assert err.value.key == f"{PATH}.x.{key}"


def test_a_torch_only_rule_is_refused_in_a_synthetic_experiment():
    config = copy.deepcopy(tiny())
    config["experiments"]["fig2"]["optimizers"]["gd"] = {"rule": "sps", "eta_max": 1.0}
    with pytest.raises(ConfigError, match="rule sps does not train full-batch") as err:
        check_optimizers(config)
    assert err.value.key == "experiments.fig2.optimizers.gd.rule"


def test_every_torch_rule_declares_valid_schemas_of_its_constructors_keywords():
    """OPTIMIZERS is the registry's view: every rule with `torch`, its class loaded, each
    declared setting a keyword of its constructor (TorchOptimizer.load checks it) and
    described by a valid JSON schema."""
    on_torch = {n for n, r in rules.RULES.items() if r.torch is not None}
    assert set(stochastic.OPTIMIZERS) == on_torch >= {"sgd", "sngd", "sps", "adam"}
    for name in on_torch:
        assert stochastic.OPTIMIZERS[name] is rules.RULES[name].torch.load()
        for schema in rules.RULES[name].torch.settings.values():
            Draft202012Validator.check_schema(schema)
            assert schema["description"]
