"""The config checks of optimizer entries: unknown rules, settings the rule ignores (both
from the rules' registry, attnbias.optim.rules), and what OptimizerSpec refuses
(configcheck runs them); for the real-data experiments, a rule whose module runs it on
torch parameters and the settings that module declares, each against its schema."""

from __future__ import annotations

from collections.abc import Iterator

from attnbias.workflow.configkeys import ConfigError


def _spec_default(key: str):
    """An optimizer setting's default: OptimizerSpec's, its one home."""
    from dataclasses import fields

    from attnbias.optim.spec import OptimizerSpec

    return {f.name: f.default for f in fields(OptimizerSpec) if f.init}[key]


def _optimizers(config: dict) -> Iterator[tuple[tuple, dict, bool]]:
    import inspect

    from attnbias.training import loop  # the trainer, whose train_u default this reads (no torch)

    default_train_u = inspect.signature(loop.train).parameters["train_u"].default
    for name, experiment in config["experiments"].items():
        train_u = experiment.get("train", {}).get("train_u", default_train_u)
        for opt_name, opt in experiment["optimizers"].items():
            yield ("experiments", name, "optimizers", opt_name), opt, train_u
    for opt_name, opt in config.get("global_convergence", {}).get("optimizers", {}).items():
        yield ("global_convergence", "optimizers", opt_name), opt, False


def _ignored(rule) -> list[str]:
    """The OptimizerSpec settings that `rule` (of attnbias.optim.rules) never reads."""
    from dataclasses import fields

    from attnbias.optim.spec import OptimizerSpec

    reads = {"rule", *rule.shared, *rule.settings}
    return [f.name for f in fields(OptimizerSpec) if f.init and f.name not in reads]


def check_optimizers(config: dict) -> None:
    """Refuse unknown rules, and settings that the rule ignores (they would only mislead):
    written, not null, and not the default (which changes nothing)."""
    from attnbias.optim import rules

    for path, opt, train_u in _optimizers(config):
        name = opt["rule"]
        _check_known(path, name, [n for n, r in rules.RULES.items() if r.full_batch])
        for key in _ignored(rules.RULES[name]):
            if opt.get(key) is not None and opt[key] != _spec_default(key):
                raise ConfigError(
                    (*path, key), f"rule {name} ignores {key}; remove it (or change the rule)"
                )
        if opt.get("lr_u") is not None and not train_u:
            raise ConfigError(
                (*path, "lr_u"), "lr_u is the step of u, but u is not trained here; remove it"
            )


def _check_known(path: tuple, name: str, regime: list[str]) -> None:
    """Refuse a rule no module defines, or one whose module does not train in this regime
    (`regime`: the rules that do)."""
    from attnbias.optim import rules

    if name in regime:
        return
    if name in rules.RULES:
        where = "on torch parameters (real data)" if path[0] == "real_data" else "full-batch"
        message = (
            f"rule {name} does not train {where}: its module ({rules.MODULES[name]}) gives no "
            f"{'torch=' if path[0] == 'real_data' else 'log_step or update'}; "
        )
    else:
        message = f"unknown rule {name!r}; "
    raise ConfigError(
        (*path, "rule"), message + f"choose one of {', '.join(regime)} (attnbias.optim.rules)"
    )


def _real_optimizers(config: dict) -> Iterator[tuple[tuple, dict]]:
    for name, experiment in config.get("real_data", {}).get("experiments", {}).items():
        for opt_name, opt in experiment.get("optimizers", {}).items():
            yield ("real_data", "experiments", name, "optimizers", opt_name), opt


def check_real_optimizers(config: dict) -> None:
    """Refuse a real-data optimizer whose rule does not run on torch parameters, a setting
    its module does not declare, and a value its declared schema refuses (Rule.torch)."""
    from jsonschema.exceptions import best_match

    from attnbias.optim import rules
    from attnbias.workflow.validator import validator_class

    regime = [n for n, r in rules.RULES.items() if r.torch is not None]
    for path, opt in _real_optimizers(config):
        name = opt["rule"]
        _check_known(path, name, regime)
        declared = rules.RULES[name].torch.settings
        for key, value in opt.items():
            if key in ("label", "rule"):
                continue
            if key not in declared:
                raise ConfigError(
                    (*path, key),
                    f"rule {name} takes no setting {key!r} on torch parameters; its settings "
                    f"are {', '.join(declared)} (its module, {rules.MODULES[name]})",
                )
            error = best_match(validator_class()(declared[key]).iter_errors(value))
            if error is not None:
                raise ConfigError((*path, key, *error.absolute_path), error.message)


def check_specs(config: dict) -> dict[tuple, object]:
    """Resolve every full-batch optimizer entry now (optim.spec.spec_of), so a bad
    combination fails before any job runs; {its config path: its OptimizerSpec}, for the
    checks that read them (configcheck_geometry)."""
    from attnbias.optim.spec import spec_of

    specs = {}
    for path, opt, train_u in _optimizers(config):
        try:
            spec = spec_of(opt, real=False)
        except ValueError as err:
            raise ConfigError(path, str(err)) from None
        if spec.reads("f_star") and spec.f_star == "opt" and train_u:
            raise ConfigError(
                path,
                "f_star 'opt' needs a fixed decoder, but the experiment's train.train_u is "
                "true; set f_star: 0",
            )
        specs[path] = spec
    return specs
