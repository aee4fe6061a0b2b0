"""Full-batch optimizers on (W, u): the step-length rules of attnbias.optim.rules (GD, NGD,
Polyak step), each optionally with momentum and Eq. 10's decay factors. Written against the
arrays' own module (numpy or torch, model.arrays): the torch loop steps A of W = W0 + A Q,
training.full_matrix the full W, with the same code (no torch imported for numpy).

An optimizer only chooses a step length for each gradient block and combines it with the
block's direction; the numerics stay in `gradients`. All lengths are formed in logs, since
a gradient's norm may be far below the smallest float (see gradients.ScaledGradient). The
rule (rules.RULES) gives each block's log step length; this module adds what every rule
shares:

momentum: heavy ball on the step, buf <- beta * buf + step, W <- W - buf (NGD-mom is ngd
with momentum). normalize: "per_block" normalises W and u each by its own norm (the paper's
NGD, Eq. 10 without its extra step factors); "global" takes one ||grad|| over all trained
blocks together (the paper's joint NGD). decay_W, decay_u: Eq. 10's extra step factors,
each block's step times (t + 1)^-decay at step t (0: none).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from attnbias.model.arrays import logsumexp, namespace
from attnbias.model.gradient_weights import ScaledGradient
from attnbias.optim.rule import StepInputs
from attnbias.optim.spec import OptimizerSpec

__all__ = ["ExcessLoss", "Optimizer"]

# () -> (log|L - f*|, sign(L - f*)), per run: what the Polyak rule reads, computed on demand
ExcessLoss = Callable[[], tuple[Any, Any]]


def _log_global_norm(grads: dict[str, ScaledGradient]):
    if len(grads) == 1:
        return next(iter(grads.values())).log_norm
    xp = namespace(next(iter(grads.values())).log_norm)
    return 0.5 * logsumexp(xp, xp.stack([2 * g.log_norm for g in grads.values()]), axis=0)


class Optimizer:
    """Applies an OptimizerSpec to named parameter tensors, in place (its rule: the one the
    spec resolved, spec.definition)."""

    def __init__(self, spec: OptimizerSpec):
        self.spec = spec
        self.rule = spec.definition
        if not self.rule.gradient_multiple:
            # a direction rule (mirror, kq, ...) leaves the gradients' span: the token
            # coordinates of the kernel and the torch stepper cannot hold its update
            raise ValueError(
                f"rule {spec.rule} is a direction rule: it trains on the full W only "
                "(training.full_matrix, which training.dispatch picks for it), not on the C "
                "kernel or the torch stepper"
            )
        self.buffers: dict[str, Any] = {}
        self.scratch: dict[str, np.ndarray] = {}  # numpy blocks' coef * direction (_product)
        self.steps = 0

    def _log_excess(self, excess):
        """log(L - f*), for a rule that reads it (the Polyak step: rule.StepInputs)."""
        if excess is None:
            raise ValueError(
                f"rule {self.spec.rule} reads the excess loss L - f*: pass the step's `excess`"
            )
        if not callable(excess):
            return excess
        log_abs, sign = excess()
        xp = namespace(log_abs)
        return xp.where(sign > 0, log_abs, -math.inf)  # no excess: no step

    def _log_step_lengths(self, grads, excess) -> dict:
        spec = self.spec
        lrs = {name: spec.lr_of(name) for name in grads}
        if spec.normalize == "global":
            log_norms = dict.fromkeys(grads, _log_global_norm(grads))
        else:
            log_norms = {name: g.log_norm for name, g in grads.items()}
        inputs = StepInputs(spec, lrs, log_norms, lambda: self._log_excess(excess))
        return self._decayed(self.rule.log_step(inputs))

    def _decayed(self, lengths: dict) -> dict:
        """Eq. 10's extra factors: each block's step times (t + 1)^-decay, t = steps taken."""
        decay = {"W": self.spec.decay_W, "u": self.spec.decay_u}
        log_t1 = math.log(self.steps + 1)
        return {name: v - decay.get(name, 0.0) * log_t1 for name, v in lengths.items()}

    def _product(self, name: str, coef, g: ScaledGradient):
        """coef * g.direction; for numpy, into a buffer of the block's made once (a fresh
        (B, d, d) array per step on the full W costs its page faults: glibc hands freed ones
        back to the system). Not under momentum, whose buffer keeps the first step's."""
        if namespace(g.direction) is not np or self.spec.momentum:
            return coef * g.direction
        shape, dtype = g.direction.shape, np.result_type(coef, g.direction)
        out = self.scratch.get(name)
        if out is None or out.shape != shape or out.dtype != dtype:
            out = self.scratch[name] = np.empty(shape, dtype)
        return np.multiply(coef, g.direction, out=out)

    def step(
        self,
        params: dict,
        grads: dict[str, ScaledGradient],
        excess=None,
    ) -> dict:
        """One step. `excess` is what a rule reading f* (the Polyak step) reads, the others
        never do: log(L - f*) per run, or a closure giving (log|L - f*|, sign(L - f*)), called
        only by such a rule; then a run at or below f* gets log(L - f*) = -inf (an f* at or
        above the initial loss is refused before: rules.polyak.check_polyak_fires).

        Returns the log step size of each block (the multiplier of its gradient), per run.
        """
        lengths = self._log_step_lengths(grads, excess)
        self.steps += 1
        for name, g in grads.items():
            # A zero gradient (e.g. in W at u = 0) has log_scale -inf (and NGD an infinite
            # step length): the block takes no step, never 0 * inf. Nothing else is
            # repaired: a NaN or infinite step makes the parameters non-finite, and
            # metrics.check_finite stops the run.
            xp = namespace(g.log_scale)
            log_coef = lengths[name] + g.log_scale
            zero = xp.isneginf(g.log_scale)
            coef = xp.where(zero, xp.zeros_like(log_coef), xp.exp(log_coef))
            update = self._product(name, coef.reshape(-1, *([1] * (g.direction.ndim - 1))), g)
            if self.spec.momentum:
                buf = self.buffers.get(name)
                update = update if buf is None else self.spec.momentum * buf + update
                self.buffers[name] = update
            params[name] -= update  # in place, numpy or torch
        return lengths
