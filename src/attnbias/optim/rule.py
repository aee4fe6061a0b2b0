"""What one optimizer rule declares (Rule), what its step reads (StepInputs, Update), and
how it is drawn (Look). Each rule is one module of attnbias.optim.rules that defines
`RULE = Rule(...)` (docs/layout.md, "Adding an optimizer"); the registry, the claims'
algorithm names, the figures' looks and the kernel's codes are read from these.

A rule trains in one regime or both: full-batch (the synthetic runs, numpy or torch arrays
in logs: the two kinds below) and on torch parameters (the real-data runs' mini-batch
training: `torch`, a TorchOptimizer naming its torch.optim.Optimizer and the config
settings its constructor takes). Adam does both; SGD, SNGD and SPS only the latter.

Two kinds of full-batch rule. A step-length rule (GD, NGD, Polyak step) chooses, for each gradient
block (W, and u when it is trained), the log of its step length: the multiplier of that
block's gradient. full_batch.Optimizer applies it, together with the settings every such
rule takes (SHARED: momentum, Eq. 10's decay factors). Lengths are formed in logs, since a
gradient's norm may be far below the smallest float. A direction rule (sign, nsd, muon,
adam, mirror, kq) returns the update itself, which leaves the span of the gradients: its
`update` is a class holding the rule's state per run (optim.directions has its arithmetic),
and it trains on the full W (training.full_matrix).

What a rule declares decides where it trains (training.dispatch), never a list of
settings: a step-length rule is a gradient multiple, so W - W0 stays in the span of the
x_js x_j1^T and the token-coordinate backends (the C kernel where the rule has a
`kernel_code`, else the torch loop) train it; a direction rule trains on the full W.
A step uses the arrays' own module (numpy or torch, model.arrays): no torch is imported,
since the workflow's config checks read the rules.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnbias.model.arrays import namespace

# settings every step-length rule takes: full_batch.Optimizer applies them after its step
SHARED = ("momentum", "decay_W", "decay_u")
# line styles a Look may name (figures.algorithm_style draws them): "solid" the plain
# algorithm; a variant, the same in every family ("capped", "per-block", "stochastic");
# or a further member of a family ("long-dash", "dash-dot-dot")
LINES = ("solid", "capped", "per-block", "stochastic", "long-dash", "dash-dot-dot")


@dataclass(frozen=True)
class Look:
    """How the figures draw an algorithm: its family (one colour for the family, in every
    figure), and its own filled marker and line style within the family."""

    family: str
    marker: str
    line: str = "solid"

    def __post_init__(self):
        if self.line not in LINES:
            raise ValueError(f"line must be one of {LINES}, got {self.line!r}")


@dataclass(frozen=True)
class StepInputs:
    """What a step-length rule reads, per run (tensors of shape (B,), one per block)."""

    spec: Any  # the OptimizerSpec
    lrs: dict[str, float]  # lr per block ("u": lr_u where set)
    log_norms: dict[str, Any]  # log ||grad|| per block; one norm over all blocks if "global"
    log_excess: Callable[[], Any]  # log(L - f*) (-inf where L <= f*), computed on demand


class Update:
    """A direction rule's state over a batch of B runs, and its step (numpy, full W).

    Built from the spec, the starting parameters {"W": (B, d, d), "u": (B, d)} (which it may
    move, as kq does, in place) and one seed per run (kq's start); step(t, params, grads)
    updates the trained blocks of `params` in place from grads {name: directions.Block}.
    """

    def __init__(self, spec, params: dict, seeds: list[int]):
        self.spec = spec
        self.state: dict[str, Any] = {}

    def step(self, t: int, params: dict, grads: dict) -> None:
        raise NotImplementedError


def _accept(spec) -> None:
    return None


def _start_accepted(spec, initial_loss: float) -> None:
    return None


def _unpublished(spec) -> None:
    """No published result says which norm's margin this rule finds."""
    return None


def setting(description: str, **schema) -> dict:
    """A TorchOptimizer setting's JSON schema: a number unless `schema` gives its type."""
    return {"description": description, "type": "number", **schema}


STEP = dict(exclusiveMinimum=0)  # a step size's bounds
MOMENTUM = dict(minimum=0, exclusiveMaximum=1)  # a heavy-ball coefficient's


@dataclass(frozen=True)
class TorchOptimizer:
    """What a rule needs to run on torch parameters (the real-data runs): its
    torch.optim.Optimizer class, written "module:Class" so that the registry stays
    torch-free (the workflow's config checks read it), and the config settings its
    constructor takes, each as a JSON schema (type, bounds, description): the config checks
    validate an entry against them, and refuse any other key."""

    cls: str
    settings: dict[str, dict]

    def __post_init__(self):
        module, _, name = self.cls.partition(":")
        if not (module and name.isidentifier()):
            raise ValueError(f"torch optimizer {self.cls!r}: write it as 'module:Class'")
        if not all(isinstance(s, dict) for s in self.settings.values()):
            raise ValueError("torch settings: {name: its JSON schema} (a dict each)")


@dataclass(frozen=True)
class Rule:
    """One update rule: for full-batch training, one of `log_step` (a step-length rule) and
    `update` (a direction rule); for torch parameters (real data), `torch`; at least one.

    name: the config's `rule`; settings: the OptimizerSpec settings it reads (besides
    SHARED for a step-length rule); caption: spec -> the head of its figure caption
    (full-batch; a real-data run's caption is its display_name and torch settings); check: spec ->
    ValueError for a combination it refuses; check_start: (spec, a run's initial loss) ->
    ValueError for a start it refuses (training.loop asks it of every run at t = 0); cap:
    the setting that caps its step length, if any; implicit_norm: spec -> the norm whose
    attention SVM a published result expects its geometry to find ("fro", "max",
    "spectral", "nuclear", "l<p>"), or None where none does (the default: the geometry
    figure frames no cell, and its claims rows are comparisons); kernel_code: its code in
    training/_kernel.c where the C kernel runs it; names: {algorithm key: how the claims
    table names it}, every algorithm it runs as (algorithm); looks: {look key: Look}
    (look_key; the default keys are the algorithm keys); algorithm, look_key: (spec,
    layout) -> key (default: the rule's name, then the algorithm key); examples: config
    settings (beyond `rule`) at which a full-batch rule runs as each of its algorithms, the
    first its plain one (the tests step, draw and name every rule at them); torch: what it
    needs to run on torch parameters (TorchOptimizer).
    """

    name: str
    names: dict[str, str]
    looks: dict[str, Look]
    settings: tuple[str, ...] = ()
    caption: Callable[[Any], str] | None = None
    log_step: Callable[[StepInputs], dict[str, Any]] | None = None
    update: type | None = None
    check: Callable[[Any], None] = _accept
    check_start: Callable[[Any, float], None] = _start_accepted
    cap: str | None = None
    implicit_norm: Callable[[Any], str | None] = _unpublished
    kernel_code: int | None = None
    algorithm: Callable[[Any, str], str] | None = None
    look_key: Callable[[Any, str], str] | None = None
    examples: tuple[dict, ...] = ({},)
    torch: TorchOptimizer | None = None

    def __post_init__(self):
        if self.log_step is not None and self.update is not None:
            raise ValueError(f"rule {self.name!r}: give one of log_step and update, not both")
        if not (self.full_batch or self.torch is not None):
            raise ValueError(
                f"rule {self.name!r}: give log_step or update (full-batch training), or torch "
                "(a TorchOptimizer: training on torch parameters), or both"
            )
        if self.full_batch and self.caption is None:
            raise ValueError(f"rule {self.name!r}: a full-batch rule needs a caption")
        if self.kernel_code is not None and self.update is not None:
            raise ValueError(f"rule {self.name!r}: the C kernel runs step-length rules only")
        if self.torch is not None and not isinstance(self.torch, TorchOptimizer):
            raise ValueError(f"rule {self.name!r}: torch must be a rule.TorchOptimizer")
        if self.torch is not None and self.name not in self.names:
            raise ValueError(
                f"rule {self.name!r}: a rule on torch parameters names its own algorithm "
                f"(names={{{self.name!r}: ...}}: a real-data run's algorithm is its rule)"
            )

    @property
    def full_batch(self) -> bool:
        """It trains the synthetic runs (full-batch, in logs): a log_step or an update."""
        return self.log_step is not None or self.update is not None

    @property
    def gradient_multiple(self) -> bool:
        """Its update is a multiple of the gradient: W - W0 stays in the token coordinates
        (training.token_problem), where the C kernel and the torch loop train."""
        return self.log_step is not None

    @property
    def shared(self) -> tuple[str, ...]:
        """The settings full_batch.Optimizer adds to its step (step-length rules)."""
        return SHARED if self.gradient_multiple else ()

    @property
    def display_name(self) -> str:
        """The rule's own name as captions and the claims print it, from its module
        (names[name]: "Adam", "SGD", "SNGD"), never a transform of the config's `rule`; every
        rule on torch parameters has one (a real-data run's algorithm is its rule)."""
        if self.name not in self.names:
            raise ValueError(f"rule {self.name!r} names no algorithm {self.name!r} (names)")
        return self.names[self.name]

    def algorithm_of(self, spec, layout: str) -> str:
        """The algorithm key of this rule at `spec`'s settings in an experiment of `layout`."""
        return self.name if self.algorithm is None else self.algorithm(spec, layout)

    def look_key_of(self, spec, layout: str) -> str:
        """The key of `looks` that draws this rule at `spec`'s settings."""
        if self.look_key is None:
            return self.algorithm_of(spec, layout)
        return self.look_key(spec, layout)


# ---------------------------------------------------------------- shared arithmetic


def run_seed(*arrays: np.ndarray) -> int:
    """A seed that is a function of one run's data (its arrays' bytes, SHA-256): a direction
    rule's random start (kq's) is the same wherever and however the run is batched."""
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return int.from_bytes(digest.digest()[:8], "little")


def full_like(v, value: float):
    """An array of `value` shaped as `v`, in `v`'s own module (numpy or torch)."""
    return namespace(v).full_like(v, value)


def capped(lengths: dict, cap: float | None) -> dict:
    """Each block's log step length, at most log(cap) (cap None: unchanged)."""
    if cap is None:
        return lengths
    log_cap = math.log(cap)
    return {name: namespace(v).minimum(v, full_like(v, log_cap)) for name, v in lengths.items()}
