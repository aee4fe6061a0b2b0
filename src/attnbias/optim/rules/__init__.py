"""The registry of every optimizer, synthetic or real-data: one module of this package per
rule, each defining `RULE` (an attnbias.optim.rule.Rule: its full-batch update, the
settings it reads, its caption, its expected norm, its kernel code, what it needs to run on
torch parameters, its algorithms' names and looks). A module added here is a rule; nothing
else lists them (docs/layout.md, "Adding an optimizer").

The claims' algorithm names (claims.coverage), the figures' looks
(figures.algorithm_style), the algorithm of a spec (OptimizerSpec.algorithm), the C
kernel's codes (training.kernel) and the real-data runs' torch optimizers
(optim.stochastic.OPTIMIZERS) are read from RULES. A rule's module (MODULES) is a code
input of the jobs that train with it only (workflow.codedeps, job_params), so adding or
editing one reruns those alone.
"""

from __future__ import annotations

import importlib
import pkgutil

from attnbias.optim.rule import Rule


def _load(module: str) -> Rule:
    """The RULE of `module`; a ValueError naming the module where it defines none, or one
    that refuses what it declares (Rule's checks: a rule missing what its regime needs)."""
    try:
        entry = getattr(importlib.import_module(f"{__name__}.{module}"), "RULE", None)
    except ValueError as err:
        raise ValueError(f"optimizer module rules/{module}.py: {err}") from None
    if not isinstance(entry, Rule):
        raise ValueError(f"rules/{module}.py defines no RULE (an attnbias.optim.rule.Rule)")
    return entry


def _discover() -> tuple[dict[str, Rule], dict[str, str]]:
    """{name: Rule} of the package's modules, in the order of their file names, and {name:
    its module's full name}."""
    found: dict[str, Rule] = {}
    modules: dict[str, str] = {}
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        entry = _load(module)
        if entry.name in found:
            raise ValueError(f"optimizer rule {entry.name!r} is defined twice (rules/{module}.py)")
        found[entry.name], modules[entry.name] = entry, f"{__name__}.{module}"
    return found, modules


RULES, MODULES = _discover()  # MODULES: rule name -> "attnbias.optim.rules.<module>"


def get(name: str) -> Rule:
    """The rule called `name`; a ValueError naming the known ones otherwise."""
    if name not in RULES:
        raise ValueError(f"unknown optimizer rule {name!r}; choose one of {tuple(RULES)}")
    return RULES[name]
