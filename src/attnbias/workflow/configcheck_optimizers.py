"""The config checks of optimizer entries: unknown rules, settings the rule ignores (both
from the rules' registry, attnbias.optim.rules), and what OptimizerSpec refuses
(configcheck runs them)."""

from __future__ import annotations

from collections.abc import Iterator

from attnbias.workflow.configkeys import ConfigError


def _spec_default(key: str):
    """An optimizer setting's default: OptimizerSpec's, its one home."""
    from dataclasses import fields

    from attnbias.optim.spec import OptimizerSpec

    return {f.name: f.default for f in fields(OptimizerSpec)}[key]


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
    return [f.name for f in fields(OptimizerSpec) if f.name not in reads]


def check_optimizers(config: dict) -> None:
    """Refuse unknown rules, and settings that the rule ignores (they would only mislead):
    written, not null, and not the default (which changes nothing)."""
    from attnbias.optim import rules

    for path, opt, train_u in _optimizers(config):
        name = opt["rule"]
        if name not in rules.RULES:
            raise ConfigError(
                (*path, "rule"),
                f"unknown rule {name!r}; choose one of {', '.join(rules.RULES)} "
                "(attnbias.optim.rules)",
            )
        for key in _ignored(rules.RULES[name]):
            if opt.get(key) is not None and opt[key] != _spec_default(key):
                raise ConfigError(
                    (*path, key), f"rule {name} ignores {key}; remove it (or change the rule)"
                )
        if opt.get("lr_u") is not None and not train_u:
            raise ConfigError(
                (*path, "lr_u"), "lr_u is the step of u, but u is not trained here; remove it"
            )


def check_specs(config: dict) -> None:
    """Build every OptimizerSpec now, so a bad combination fails before any job runs."""
    from attnbias.optim.spec import OptimizerSpec

    for path, opt, train_u in _optimizers(config):
        try:
            spec = OptimizerSpec.from_config(opt)
        except ValueError as err:
            raise ConfigError(path, str(err)) from None
        if spec.reads("f_star") and spec.f_star == "opt" and train_u:
            raise ConfigError(
                path,
                "f_star 'opt' needs a fixed decoder, but the experiment's train.train_u is "
                "true; set f_star: 0",
            )
