"""What an optimizer is, from its settings, never from its config name: the one key by which
the claims table decides which statements a run's rows test (attnbias.claims.coverage) and
the figures draw it (attnbias.figures.algorithm_style). Each rule's module says which
algorithms it runs as (Rule.algorithm). A leaf of the figure jobs (torch- and pandas-free),
so they need nothing of the claims package."""

from __future__ import annotations

from attnbias.optim.spec import OptimizerSpec


def _full_batch(settings: dict, layout: str | None) -> OptimizerSpec | None:
    """The full-batch spec of a config entry (its rule resolved); None for a real-data
    run (torch settings such as Adam's betas), whose rule is its own algorithm."""
    return None if layout in (None, "real") else OptimizerSpec.from_config(settings)


def algorithm(settings: dict, layout: str | None) -> str:
    """The algorithm of an optimizer (a key of claims.coverage.ALGORITHMS, or a rule's own
    name), from its settings (the rule and what it reads) and the experiment's layout."""
    spec = _full_batch(settings, layout)
    return settings["rule"] if spec is None else spec.definition.algorithm_of(spec, layout)


def look_key(settings: dict, layout: str | None) -> str:
    """The key of the Look that draws an optimizer (figures.algorithm_style.STYLES): its
    algorithm's, or finer where its rule says (nsd: by its norm). `layout` None: a
    real-data run, drawn as its rule."""
    spec = _full_batch(settings, layout)
    return settings["rule"] if spec is None else spec.definition.look_key_of(spec, layout)
