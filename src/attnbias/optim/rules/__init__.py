"""The registry of the full-batch update rules: one module of this package per rule, each
defining `RULE` (an attnbias.optim.rule.Rule: its update, the settings it reads, its
caption, its expected norm, its kernel code, its algorithms' names and looks). A module
added here is a rule; nothing else lists them (docs/layout.md, "Adding an optimizer").

The claims' algorithm names (claims.coverage), the figures' looks
(figures.algorithm_style), the algorithm of a config entry (optim.algorithm) and the C
kernel's codes (training.kernel) are read from RULES. The workflow's code dependencies
count every module here (workflow.codedeps), as this package imports them by name.
"""

from __future__ import annotations

import importlib
import pkgutil

from attnbias.optim.rule import Rule


def _discover() -> dict[str, Rule]:
    """{name: Rule} of the package's modules, in the order of their file names."""
    found: dict[str, Rule] = {}
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        entry = getattr(importlib.import_module(f"{__name__}.{module}"), "RULE", None)
        if not isinstance(entry, Rule):
            raise ValueError(f"rules.{module} defines no RULE (an attnbias.optim.rule.Rule)")
        if entry.name in found:
            raise ValueError(f"optimizer rule {entry.name!r} is defined twice (rules.{module})")
        found[entry.name] = entry
    return found


RULES: dict[str, Rule] = _discover()


def get(name: str) -> Rule:
    """The rule called `name`; a ValueError naming the known ones otherwise."""
    if name not in RULES:
        raise ValueError(f"unknown optimizer rule {name!r}; choose one of {tuple(RULES)}")
    return RULES[name]
