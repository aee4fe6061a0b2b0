"""What an optimizer is, from its settings, never from its config name: the one key by which
the claims table decides which statements a run's rows test (attnbias.claims.coverage) and
the figures draw it (attnbias.figures.algorithm_style). Each rule's module says which
algorithms it runs as (Rule.algorithm). A leaf of the figure jobs (torch- and pandas-free),
so they need nothing of the claims package."""

from __future__ import annotations

from attnbias.optim import rules
from attnbias.optim.spec import OptimizerSpec


def _rule(settings: dict, layout: str | None):
    """The full-batch rule of a config entry; None for a real-data run's rule (stochastic,
    torch's settings such as Adam's betas), which is its own algorithm."""
    if layout in (None, "real") or settings["rule"] not in rules.RULES:
        return None
    return rules.RULES[settings["rule"]]


def algorithm(settings: dict, layout: str | None) -> str:
    """The algorithm of an optimizer (a key of claims.coverage.ALGORITHMS, or a rule's own
    name), from its settings (the rule and what it reads) and the experiment's layout."""
    rule = _rule(settings, layout)
    if rule is None:
        return settings["rule"]
    return rule.algorithm_of(OptimizerSpec.from_config(settings), layout)


def look_key(settings: dict, layout: str | None) -> str:
    """The key of the Look that draws an optimizer (figures.algorithm_style.STYLES): its
    algorithm's, or finer where its rule says (nsd: by its norm). `layout` None: a
    real-data run, drawn as its rule."""
    rule = _rule(settings, layout)
    if rule is None:
        return settings["rule"]
    return rule.look_key_of(OptimizerSpec.from_config(settings), layout)
