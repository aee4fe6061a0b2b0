"""Which norm's max-margin each optimizer is expected to find: its rule's implicit_norm
(attnbias.optim.rules), read from the optimizer's config settings."""

from __future__ import annotations

from attnbias.optim import rules
from attnbias.optim.spec import OptimizerSpec


def expected_norm(settings: dict) -> str:
    """The norm name (attnbias.svm.norms) of an optimizer's config entry (with `rule`)."""
    spec = OptimizerSpec.from_config(settings)
    return rules.get(settings["rule"]).implicit_norm(spec)


def expected_norms(optimizers: dict) -> dict[str, str]:
    """Config name -> expected norm, for an experiment's optimizers."""
    return {name: expected_norm(settings) for name, settings in optimizers.items()}
