"""Stochastic optimizers for the real-data figures, as `torch.optim.Optimizer` subclasses.

  SNGD  p <- p - min(lr / ||g||, max_step) * g           (heavy-ball momentum optional)
  SPS   p <- p - min(eta_max, (loss - f_star) / (c ||g||^2)) * g   (Loizou et al. 2021, SPS_max)

g is the mini-batch gradient and ||g|| its GLOBAL Euclidean norm: one norm over every
parameter of every param group, as if all parameters were one vector, not one norm per
tensor (docs/model.md, "Stochastic optimizers"). Param groups only choose their own
settings (lr, max_step, momentum; eta_max, c, f_star): each group steps by its own step
size times its part of g, all computed from the one global norm. A step with ||g|| = 0
changes nothing, momentum buffers included.

Both follow torch's conventions (`param_groups`, `state_dict()` round trips, `step(closure)`)
so they run in any training loop. SPS also needs the loss of the batch the gradient came
from: `step(closure)`, `step(loss=...)`, or `add_loss(...)` before a plain `step()` (which is
how examples/hf_trainer.py uses it inside the Hugging Face Trainer).

`make_optimizer(name, params, **settings)` builds one from a config name.

These are the stochastic (mini-batch, autograd) counterparts of the full-batch rules in
`attnbias.optimizers`, which work in log space on the synthetic problems instead.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable

import torch
from torch.nn.utils import get_total_norm

__all__ = ["SNGD", "SPS", "OPTIMIZERS", "make_optimizer", "global_grad_norm"]


def _params_with_grad(param_groups) -> list[list[torch.Tensor]]:
    return [[p for p in group["params"] if p.grad is not None] for group in param_groups]


def _groups_with_grad(param_groups):
    """(index, group, its parameters that have a gradient) for each group with any."""
    for i, (group, params) in enumerate(
        zip(param_groups, _params_with_grad(param_groups), strict=True)
    ):
        if params:
            yield i, group, params


def global_grad_norm(param_groups) -> float:
    """||g||_2 over the gradients of all parameters of all groups together (0 when none)."""
    grads = [p.grad for group in _params_with_grad(param_groups) for p in group]
    if not grads:
        return 0.0
    norm = float(get_total_norm(grads, norm_type=2.0))
    if not math.isfinite(norm):
        raise FloatingPointError(
            f"the gradient norm is {norm}: the loss or the gradient overflowed (lower the "
            "learning rate, or check the batch)"
        )
    return norm


def _check_positive(name: str, value: float | None, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if value is None or not value > 0:  # also rejects NaN
        raise ValueError(f"{name} must be positive, got {value!r}")


class SNGD(torch.optim.Optimizer):
    """Stochastic normalized gradient descent with the global gradient norm.

    Per group: step size s = min(lr / ||g||, max_step) (max_step None: uncapped), then
      without momentum:  p <- p - s * g
      with momentum b:   buf <- b * buf + (s / lr) * g,  p <- p - lr * buf
    so the buffer averages the normalized gradient g / ||g|| (the cap scales it down when it
    binds), torch.optim.SGD's heavy-ball convention: with a constant lr this is
    buf' <- b * buf' + s * g, p <- p - buf', NGD-mom of `attnbias.optimizers`.
    ||g|| is one norm over all groups (module docstring); a zero gradient skips the step.

    After each step `last_step_sizes` holds s for each group (None where skipped).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0.0,
        max_step: float | None = None,
    ):
        _check_positive("SNGD lr", lr)
        _check_positive("SNGD max_step", max_step, allow_none=True)
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"SNGD momentum must lie in [0, 1), got {momentum!r}")
        super().__init__(params, {"lr": lr, "momentum": momentum, "max_step": max_step})
        self.last_step_sizes: list[float | None] = [None] * len(self.param_groups)

    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor] | None = None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        norm = global_grad_norm(self.param_groups)
        self.last_step_sizes = [None] * len(self.param_groups)
        if norm == 0.0:
            return loss
        for i, group, params in _groups_with_grad(self.param_groups):
            lr, momentum, cap = group["lr"], group["momentum"], group["max_step"]
            # scale = size / lr, written so that lr = 0 (an LR schedule's end) divides nothing
            scale = 1.0 / norm if cap is None or lr <= cap * norm else cap / lr
            size = lr * scale
            self.last_step_sizes[i] = size
            grads = [p.grad for p in params]
            if momentum == 0.0:
                torch._foreach_add_(params, grads, alpha=-size)
                continue
            bufs = []
            for p in params:
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(
                        p, memory_format=torch.preserve_format
                    )
                bufs.append(state["momentum_buffer"])
            torch._foreach_mul_(bufs, momentum)
            torch._foreach_add_(bufs, grads, alpha=scale)
            torch._foreach_add_(params, bufs, alpha=-lr)
        return loss


class SPS(torch.optim.Optimizer):
    """Stochastic Polyak step, SPS_max (Loizou, Vaswani, Laradji, Lacoste-Julien 2021).

    Per group: step size s = min(eta_max, max(loss - f_star, 0) / (c ||g||^2)), p <- p - s * g,
    with `loss` the mini-batch loss that g is the gradient of and ||g|| the global norm over
    all groups (module docstring). f_star is a lower bound on the mini-batch loss (0 for
    cross-entropy); eta_max=inf gives the uncapped SPS. A zero gradient skips the step.

    The loss comes from exactly one of:
      step(closure)   closure() zeroes the gradients, computes the loss, calls backward() and
                      returns the loss (torch's convention);
      step(loss=L)    the loss whose gradient is in .grad now (a tensor or a float);
      add_loss(L)     before a plain step(): for loops that call step() with no arguments
                      (the HF Trainer: see examples/hf_trainer.py). Calls add up until the next
                      step, which suits gradient accumulation: hand over each micro-batch's
                      loss as it was backpropagated (already divided by the number of
                      micro-batches) and the sum is the loss of the accumulated gradient.

    eta_max is kept in each group under torch's name "lr", so LR schedulers (and the HF
    Trainer's) scale the cap; a param-group dict may give it as "eta_max" or "lr".
    After each step `last_step_sizes` holds s for each group (None where skipped).
    """

    def __init__(
        self,
        params: Iterable,
        eta_max: float = math.inf,
        c: float = 0.5,
        f_star: float = 0.0,
    ):
        _check_positive("SPS eta_max", eta_max)
        _check_positive("SPS c", c)
        if not math.isfinite(f_star):
            raise ValueError(f"SPS f_star must be finite, got {f_star!r}")
        self._pending_loss: float | None = None
        super().__init__(params, {"lr": eta_max, "c": c, "f_star": f_star})
        self.last_step_sizes: list[float | None] = [None] * len(self.param_groups)

    def add_param_group(self, param_group: dict) -> None:
        if "eta_max" in param_group:
            if "lr" in param_group:
                raise ValueError("an SPS param group gives both 'eta_max' and 'lr' (the same cap)")
            param_group = dict(param_group)
            param_group["lr"] = param_group.pop("eta_max")
        super().add_param_group(param_group)

    def add_loss(self, loss: torch.Tensor | float) -> None:
        """Hand over (part of) the loss for the next plain step(); calls add up."""
        value = float(loss.detach()) if isinstance(loss, torch.Tensor) else float(loss)
        self._pending_loss = value if self._pending_loss is None else self._pending_loss + value

    @torch.no_grad()
    def step(
        self,
        closure: Callable[[], torch.Tensor] | None = None,
        loss: torch.Tensor | float | None = None,
    ):
        if closure is not None and loss is not None:
            raise ValueError("SPS.step: give either a closure or loss=, not both")
        pending, self._pending_loss = self._pending_loss, None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        elif loss is None:
            loss = pending
        if loss is None:
            raise ValueError(
                "SPS.step needs the mini-batch loss for its step size: call step(closure) with "
                "a closure that returns the loss, step(loss=loss), or add_loss(loss) before "
                "step() (examples/hf_trainer.py does that inside the Hugging Face Trainer)"
            )
        value = float(loss.detach()) if isinstance(loss, torch.Tensor) else float(loss)
        if not math.isfinite(value):
            raise FloatingPointError(f"SPS.step: the loss is {value}")
        norm = global_grad_norm(self.param_groups)
        self.last_step_sizes = [None] * len(self.param_groups)
        if norm == 0.0:
            return loss
        for i, group, params in _groups_with_grad(self.param_groups):
            polyak = max(value - group["f_star"], 0.0) / (group["c"] * norm**2)
            size = min(group["lr"], polyak)
            self.last_step_sizes[i] = size
            torch._foreach_add_(params, [p.grad for p in params], alpha=-size)
        return loss


OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = {
    "sgd": torch.optim.SGD,
    "sngd": SNGD,
    "sps": SPS,
    "adam": torch.optim.Adam,
}


def _settings_of(cls: type) -> list[str]:
    signature = inspect.signature(cls.__init__)
    return [name for name in signature.parameters if name not in ("self", "params")]


def make_optimizer(name: str, params: Iterable, **settings) -> torch.optim.Optimizer:
    """The optimizer called `name` in the config (sgd, sngd, sps, adam) over `params`.

    `settings` are the constructor's keywords (sgd/adam: torch.optim.SGD/Adam's, e.g. lr,
    momentum, betas; sngd: lr, momentum, max_step; sps: eta_max, c, f_star).
    """
    cls = OPTIMIZERS.get(name)
    if cls is None:
        raise ValueError(f"unknown optimizer {name!r}; choose one of {sorted(OPTIMIZERS)}")
    allowed = _settings_of(cls)
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise ValueError(
            f"optimizer {name!r} ({cls.__module__}.{cls.__qualname__}) has no setting(s) "
            f"{unknown}; its settings are {allowed}"
        )
    return cls(params, **settings)
