"""Which norm's max-margin each optimizer is expected to find: its rule's implicit_norm
(attnbias.optim.rules), read from the optimizer's config settings; None where no published
result says (a new rule's, unless its module names one): then the geometry figure frames no
cell, the config checks ask for no norm, and its claims rows are comparisons."""

from __future__ import annotations

from attnbias.optim.spec import OptimizerSpec


def expected_norm(settings: dict) -> str | None:
    """The norm name (attnbias.svm.norms) of an optimizer's config entry (with `rule`), or
    None where no published result names one."""
    return OptimizerSpec.from_config(settings).implicit_norm()


def expected_norms(optimizers: dict) -> dict[str, str | None]:
    """Config name -> expected norm, for an experiment's optimizers."""
    return {name: expected_norm(settings) for name, settings in optimizers.items()}
