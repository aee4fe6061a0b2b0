"""The full-batch update rules of the synthetic runs: one entry each (docs/layout.md,
"Adding an optimizer").

A rule chooses, for each gradient block (W, and u when it is trained), the log of its step
length: the multiplier of that block's gradient. full_batch.Optimizer applies it, together
with the settings every rule takes (SHARED: momentum, Eq. 10's decay factors). Lengths are
formed in logs, since a gradient's norm may be far below the smallest float.

A rule declares the settings of OptimizerSpec it reads: the config checks refuse the others
(a setting that would be silently ignored, workflow.configcheck), and spec.reads answers
from it. Its step uses the tensors' own methods only, so this module imports no torch: the
workflow's config checks read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# settings every rule takes: full_batch.Optimizer applies them after the rule's step
SHARED = ("momentum", "decay_W", "decay_u")


@dataclass(frozen=True)
class StepInputs:
    """What a rule's step reads, per run (tensors of shape (B,), one per block)."""

    spec: Any  # the OptimizerSpec
    lrs: dict[str, float]  # lr per block ("u": lr_u where set)
    log_norms: dict[str, Any]  # log ||grad|| per block; one norm over all blocks if "global"
    log_excess: Callable[[], Any]  # log(L - f*) (-inf where L <= f*), computed on demand


def _accept(spec) -> None:
    return None


@dataclass(frozen=True)
class Rule:
    """One update rule; registered with the `rule` decorator below."""

    name: str
    settings: tuple[str, ...]  # the OptimizerSpec settings it reads, besides SHARED
    caption: Callable[[Any], str]  # spec -> the head of its figure caption
    log_step: Callable[[StepInputs], dict[str, Any]]  # log step length per block
    check: Callable[[Any], None] = _accept  # spec -> ValueError for a combination it refuses


RULES: dict[str, Rule] = {}


def rule(name: str, settings: tuple[str, ...], caption, check=_accept):
    """Register the decorated function as the step of the rule `name` (see Rule)."""

    def register(log_step):
        if name in RULES:
            raise ValueError(f"optimizer rule {name!r} is registered twice")
        RULES[name] = Rule(name, settings, caption, log_step, check)
        return log_step

    return register


def get(name: str) -> Rule:
    """The rule called `name`; a ValueError naming the known ones otherwise."""
    if name not in RULES:
        raise ValueError(f"unknown optimizer rule {name!r}; choose one of {tuple(RULES)}")
    return RULES[name]


def capped(lengths: dict, cap: float | None) -> dict:
    """Each block's log step length, at most log(cap) (cap None: unchanged)."""
    if cap is None:
        return lengths
    return {name: v.clamp(max=math.log(cap)) for name, v in lengths.items()}


# ---------------------------------------------------------------- the rules


@rule("gd", ("lr", "lr_u"), caption=lambda spec: f"GD lr={spec.lr:g}")
def _gd(s: StepInputs) -> dict:
    """W <- W - lr * grad"""
    return {name: v.new_full(v.shape, math.log(s.lrs[name])) for name, v in s.log_norms.items()}


@rule("ngd", ("lr", "lr_u", "max_step", "normalize"), caption=lambda spec: f"NGD lr={spec.lr:g}")
def _ngd(s: StepInputs) -> dict:
    """W <- W - min(lr / ||grad||, max_step) * grad"""
    lengths = {name: math.log(s.lrs[name]) - v for name, v in s.log_norms.items()}
    return capped(lengths, s.spec.max_step)


def _polyak_global_norm(spec) -> None:
    if spec.normalize == "per_block":
        # (L - f*) / ||g_W||^2 explodes while g_W is tiny next to g_u (at u ~ 0).
        raise ValueError("the Polyak step takes the norm over all blocks: normalize='global'")


def _eta_max(spec) -> str:
    return "none" if spec.eta_max is None else f"{spec.eta_max:g}"


@rule(
    "polyak",
    ("eta_max", "f_star", "normalize"),  # normalize: global only (check)
    caption=lambda spec: f"Polyak step eta_max={_eta_max(spec)}",
    check=_polyak_global_norm,
)
def _polyak(s: StepInputs) -> dict:
    """W <- W - min((L - f*) / ||grad||^2, eta_max) * grad"""
    log_excess = s.log_excess()
    return capped({name: log_excess - 2 * v for name, v in s.log_norms.items()}, s.spec.eta_max)


def check_polyak_fires(spec, initial_loss: float) -> None:
    """A Polyak step with a number f* at or above the initial loss never steps: refuse it.
    initial_loss: the lowest of the batch's runs at the first step (both backends ask)."""
    if spec.f_star == "opt" or initial_loss > spec.f_star:
        return
    raise ValueError(
        f"Polyak step with f_star={spec.f_star:g} never steps: f* is at or above the initial "
        f"loss ({initial_loss:.6g}); set f_star below it (0 is the infimum of the loss)"
    )
