"""What an optimizer is, from its settings, never from its config name: the one key by which
the claims table decides which statements a run's rows test (attnbias.claims.coverage) and
the figures pick its colour and marker (attnbias.figures.algorithm_style). A leaf module
(torch- and pandas-free), so the figure jobs need nothing of the claims package."""

from __future__ import annotations

from attnbias.optim import rules
from attnbias.optim.spec import OptimizerSpec


def algorithm(settings: dict, layout: str) -> str:
    """The algorithm of an optimizer (a key of claims.coverage.ALGORITHMS, or a rule's own
    name), from its settings (the rule and what it reads) and the experiment's layout."""
    rule = settings["rule"]
    # a real-data run's rule (stochastic, torch's settings such as Adam's betas): its name
    if layout == "real" or rule not in rules.RULES:
        return rule
    spec = OptimizerSpec.from_config(settings)
    if rule == "gd":
        return "gd"
    if rule == "polyak":
        return "ps" if spec.eta_max is None else "ps-capped"
    if rule == "muon":
        return "muon" if spec.beta else "spectral"
    if rule != "ngd":  # a rule of optim/rules.py that no result is proved for: its own name
        return rule
    if spec.decay_W or spec.decay_u:
        return "eq10"
    capped = "" if spec.max_step is None else "-capped"
    if spec.momentum:
        return "ngd-mom" + capped
    if layout == "joint":
        return "per-block-ngd" if spec.normalize == "per_block" else "joint-ngd"
    return "ngd" + capped
