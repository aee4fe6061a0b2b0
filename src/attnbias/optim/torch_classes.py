"""A rule's torch optimizer class loaded from its "module:Class" name (Rule.torch, a
TorchOptimizer) and checked against what the rule declares. Apart from optim.rule so that
the registry, which the plot rules' config checks read, imports no torch."""

from __future__ import annotations

import importlib
import inspect

import torch

from attnbias.optim.rule import TorchOptimizer


def load(declared: TorchOptimizer) -> type[torch.optim.Optimizer]:
    """The optimizer class. A ValueError where it is not one, or where a declared setting
    is no keyword of its constructor."""
    module, _, name = declared.cls.partition(":")
    found = getattr(importlib.import_module(module), name, None)
    if not (isinstance(found, type) and issubclass(found, torch.optim.Optimizer)):
        raise ValueError(f"{declared.cls} is not a torch.optim.Optimizer class")
    keywords = set(inspect.signature(found.__init__).parameters) - {"self", "params"}
    unknown = sorted(set(declared.settings) - keywords)
    if unknown:
        raise ValueError(
            f"settings {unknown} are no keywords of {declared.cls}'s constructor "
            f"({sorted(keywords)})"
        )
    return found
