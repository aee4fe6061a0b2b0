"""Stochastic optimizers for the real-data figures, as `torch.optim.Optimizer` subclasses.

  SNGD  p <- p - min(lr / ||g||, max_step) * g           (heavy-ball momentum optional)
  SPS   p <- p - min(eta_max, (loss - f_star) / (c ||g||^2)) * g   (Loizou et al. 2021, SPS_max)

g is the mini-batch gradient and ||g|| its GLOBAL Euclidean norm: one norm over every
parameter of every param group, as if all parameters were one vector, not one norm per
tensor (docs/model.md, "Stochastic optimizers"). Param groups only choose their own
settings (lr, max_step, momentum; eta_max, c, f_star): each group steps by its own step
size times its part of g, all computed from the one global norm. A step with ||g|| = 0
changes nothing, momentum buffers included.

A step never waits for the device: the norm (torch's foreach norms), the step size and SPS's
loss stay tensors on the parameters' device, and the update is torch.optim.SGD's own: its
fused kernel (one pass; float32, bf16 and fp16 parameters), else its foreach ops (float64).
Values reach the host only when read: `last_step_sizes` (which also raises
FloatingPointError for a non-finite gradient norm or loss), `global_grad_norm`, and whether
the cap bound (`last_cap_bound`, `cap_bound_steps`: attnbias.optim.cap_count). So a
non-finite gradient raises nothing inside the step: the fused kernel skips that step, the
foreach path spoils the parameters as torch's SGD does, and the trainer reports the
non-finite loss at its next log point.

Both follow torch's conventions (`param_groups`, `state_dict()` round trips, `step(closure)`)
so they run in any training loop. SPS also needs the loss of the batch the gradient came
from: `step(closure)`, `step(loss=...)`, or `add_loss(...)` before a plain `step()` (which is
how examples/hf_trainer.py uses it inside the Hugging Face Trainer).

`make_optimizer(name, params, **settings)` builds one from a config name: the optimizer a
rule module of attnbias.optim.rules names (its `torch`), SGD and Adam torch's own;
OPTIMIZERS is that view of the registry.

These are the stochastic (mini-batch, autograd) counterparts of the full-batch rules in
`attnbias.optim.full_batch`, which work in log space on the synthetic problems instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch
from torch.nn.utils import get_total_norm
from torch.optim.optimizer import _get_fused_kernels_supported_devices

from attnbias.optim import rules
from attnbias.optim.cap_count import CapCount

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


def _grads(param_groups) -> list[torch.Tensor]:
    return [p.grad for group in _params_with_grad(param_groups) for p in group]


def _device_norm(grads: list[torch.Tensor]) -> torch.Tensor:
    """||g||_2 of all `grads` together, as a tensor on their device (float32 at least, so
    that bf16 gradients get a float32 step size): one foreach norm per device and dtype, no
    host sync."""
    norm = get_total_norm(grads, norm_type=2.0)
    return norm.to(torch.promote_types(norm.dtype, torch.float32))


def _non_finite_norm(norm: float) -> FloatingPointError:
    return FloatingPointError(
        f"the gradient norm is {norm}: the loss or the gradient overflowed (lower the "
        "learning rate, or check the batch)"
    )


def global_grad_norm(param_groups) -> float:
    """||g||_2 over the gradients of all parameters of all groups together (0 when none).
    A host read: for logging and tests, not inside a step."""
    grads = _grads(param_groups)
    if not grads:
        return 0.0
    norm = float(_device_norm(grads))
    if not math.isfinite(norm):
        raise _non_finite_norm(norm)
    return norm


class _LazyStepSizes:
    """The step sizes of the last step, kept as device tensors until someone reads them."""

    def __init__(self, n_groups: int):
        self.n_groups = n_groups
        self.norm: torch.Tensor | None = None  # None: no gradient at all, nothing stepped
        self.sizes: dict[int, torch.Tensor] = {}
        self.loss: torch.Tensor | None = None  # SPS's loss, checked when read

    def read(self) -> list[float | None]:
        skipped: list[float | None] = [None] * self.n_groups
        if self.norm is None:
            return skipped
        norm = float(self.norm)
        if not math.isfinite(norm):
            raise _non_finite_norm(norm)
        if self.loss is not None and not math.isfinite(float(self.loss)):
            raise FloatingPointError(f"SPS.step: the loss is {float(self.loss)}")
        if norm == 0.0:
            return skipped
        return [float(self.sizes[i]) if i in self.sizes else None for i in range(self.n_groups)]


class _LazyStepSizeMixin:
    """`last_step_sizes`: s of each group in the last step (None where skipped), read from
    the device on access; FloatingPointError if that step's gradient norm (or SPS's loss)
    was not finite."""

    @property
    def last_step_sizes(self) -> list[float | None]:
        return self._last_step.read()


# torch's fused SGD kernel takes these dtypes (its step-size tensors are float32)
FUSED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _fusable(params: list[torch.Tensor]) -> bool:
    devices = _get_fused_kernels_supported_devices()
    return all(p.dtype in FUSED_DTYPES and p.device.type in devices for p in params)


def _sgd_update(
    params: list[torch.Tensor],
    bufs: list[torch.Tensor] | None,
    *,
    lr: float | torch.Tensor,
    momentum: float,
    grad_scale: torch.Tensor | None,
    skip: torch.Tensor,
) -> None:
    """torch.optim.SGD's update with g / grad_scale for g, all on the device:
      no momentum (bufs None): p <- p - lr * g / grad_scale
      momentum:                buf <- momentum * buf + g / grad_scale,  p <- p - lr * buf
    and nothing at all (buffers included) where the 0-dim tensor `skip` is true. Through
    torch's fused SGD kernel (one pass) where the parameters allow it, else foreach ops
    (float64, which the fused kernel's float32 step sizes would round)."""
    grads = [p.grad for p in params]
    if _fusable(params):
        lists = [params, grads] + ([bufs] if bufs is not None else [])
        grouped = torch.optim.Optimizer._group_tensors_by_device_and_dtype(lists)
        for (device, _), (tensors, _) in grouped.items():

            def on(t, device=device):
                return t if not isinstance(t, torch.Tensor) else t.float().to(device)

            torch._fused_sgd_(
                tensors[0],
                tensors[1],
                tensors[2] if bufs is not None else [],
                weight_decay=0.0,
                momentum=momentum,
                lr=on(lr),
                dampening=0.0,
                nesterov=False,
                maximize=False,
                is_first_step=False,
                grad_scale=None if grad_scale is None else on(grad_scale),
                found_inf=on(skip),
            )
        return
    # the factors on g (1 / grad_scale), on the buffer and on the update; neutral on a skip
    unit = torch.where(skip, 0.0, 1.0 if grad_scale is None else grad_scale.reciprocal())
    if bufs is None:  # p <- p - (lr / grad_scale) g
        torch._foreach_sub_(params, torch._foreach_mul(grads, lr * unit))
        return
    torch._foreach_mul_(bufs, torch.where(skip, 1.0, momentum))
    torch._foreach_add_(bufs, torch._foreach_mul(grads, unit))
    torch._foreach_sub_(params, torch._foreach_mul(bufs, torch.where(skip, 0.0, lr)))


def _check_positive(name: str, value: float | None, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if value is None or not value > 0:  # also rejects NaN
        raise ValueError(f"{name} must be positive, got {value!r}")


class SNGD(CapCount, _LazyStepSizeMixin, torch.optim.Optimizer):
    """Stochastic normalized gradient descent with the global gradient norm.

    Per group: step size s = min(lr / ||g||, max_step) (max_step None: uncapped), then
      without momentum:  p <- p - s * g
      with momentum b:   buf <- b * buf + (s / lr) * g,  p <- p - lr * buf
    so the buffer averages the normalized gradient g / ||g|| (the cap scales it down when it
    binds), torch.optim.SGD's heavy-ball convention: with a constant lr this is
    buf' <- b * buf' + s * g, p <- p - buf', NGD-mom of `attnbias.optim.full_batch`.
    ||g|| is one norm over all groups (module docstring); a zero gradient skips the step.

    After each step `last_step_sizes` holds s for each group (None where skipped), and
    `last_cap_bound` whether lr / ||g|| >= max_step in some group (`cap_bound_steps`: at how
    many steps so far).
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
        self._last_step = _LazyStepSizes(len(self.param_groups))

    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor] | None = None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._last_step = record = _LazyStepSizes(len(self.param_groups))
        grads = _grads(self.param_groups)
        if not grads:
            self._no_step()
            return loss
        record.norm = norm = _device_norm(grads)
        # a zero (or non-finite) norm moves nothing, momentum buffers included
        skip = (norm == 0) | ~torch.isfinite(norm)
        bound = None  # the cap bound in some group: lr / ||g|| >= max_step
        for i, group, params in _groups_with_grad(self.param_groups):
            lr, momentum, cap = group["lr"], group["momentum"], group["max_step"]
            # size = lr / grad_scale = min(lr / ||g||, cap); lr = 0 (an LR schedule's end)
            # divides nothing
            grad_scale = norm if cap is None or lr == 0 else norm.clamp(min=lr / cap)
            if grad_scale is not norm:
                bound = (norm <= lr / cap) | (False if bound is None else bound)
            record.sizes[i] = torch.where(skip, 0.0, lr / grad_scale)
            bufs = self._momentum_buffers(params) if momentum else None
            _sgd_update(params, bufs, lr=lr, momentum=momentum, grad_scale=grad_scale, skip=skip)
        self._count_cap(bound, skip)
        return loss

    def _momentum_buffers(self, params: list[torch.Tensor]) -> list[torch.Tensor]:
        bufs = []
        for p in params:
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            bufs.append(state["momentum_buffer"])
        return bufs


class SPS(CapCount, _LazyStepSizeMixin, torch.optim.Optimizer):
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
    After each step `last_step_sizes` holds s for each group (None where skipped), and
    `last_cap_bound` whether the Polyak step was >= eta_max in some group (`cap_bound_steps`:
    at how many steps so far).
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
        self._last_step = _LazyStepSizes(len(self.param_groups))

    def add_param_group(self, param_group: dict) -> None:
        if "eta_max" in param_group:
            if "lr" in param_group:
                raise ValueError("an SPS param group gives both 'eta_max' and 'lr' (the same cap)")
            param_group = dict(param_group)
            param_group["lr"] = param_group.pop("eta_max")
        super().add_param_group(param_group)

    def add_loss(self, loss: torch.Tensor | float) -> None:
        """Hand over (part of) the loss for the next plain step(); calls add up."""
        value = loss.detach() if isinstance(loss, torch.Tensor) else float(loss)
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
        if not isinstance(loss, torch.Tensor) and not math.isfinite(loss):
            raise FloatingPointError(f"SPS.step: the loss is {loss}")  # known on the host
        self._last_step = record = _LazyStepSizes(len(self.param_groups))
        grads = _grads(self.param_groups)
        if not grads:
            self._no_step()
            return loss
        record.norm = norm = _device_norm(grads)
        value = torch.as_tensor(
            loss.detach() if isinstance(loss, torch.Tensor) else loss, device=norm.device
        ).to(norm.dtype)
        record.loss = value
        # a zero or non-finite norm, or a non-finite loss, moves nothing
        skip = (norm == 0) | ~torch.isfinite(norm) | ~torch.isfinite(value)
        squared = norm.square()
        bound = None  # the cap bound in some group: the Polyak step >= eta_max
        for i, group, params in _groups_with_grad(self.param_groups):
            polyak = (value - group["f_star"]).clamp(min=0.0) / (group["c"] * squared)
            size = torch.where(skip, 0.0, polyak.clamp(max=group["lr"]))
            if math.isfinite(group["lr"]):
                bound = (polyak >= group["lr"]) | (False if bound is None else bound)
            record.sizes[i] = size
            _sgd_update(params, None, lr=size, momentum=0.0, grad_scale=None, skip=skip)
        self._count_cap(bound, skip)
        return loss


def _torch_optimizers() -> dict[str, type[torch.optim.Optimizer]]:
    """{rule name: its torch optimizer class} of every rule of the registry that runs on
    torch parameters (Rule.torch); a ValueError naming the module of one that does not load."""
    found = {}
    for name, rule in rules.RULES.items():
        if rule.torch is not None:
            try:
                found[name] = rule.torch.load()
            except (ValueError, ImportError) as err:
                raise ValueError(f"optimizer module {rules.MODULES[name]}: {err}") from None
    return found


# a view of the registry (attnbias.optim.rules): each rule module names its torch optimizer
OPTIMIZERS: dict[str, type[torch.optim.Optimizer]] = _torch_optimizers()


def make_optimizer(name: str, params: Iterable, **settings) -> torch.optim.Optimizer:
    """The optimizer of the rule called `name` (sgd, sngd, sps, adam, or any rule module
    with `torch`) over `params`.

    `settings` are the constructor's keywords that the rule's module declares (sgd/adam:
    torch.optim.SGD/Adam's, e.g. lr, momentum, betas; sngd: lr, momentum, max_step; sps:
    eta_max, c, f_star).
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r}; choose one of {sorted(OPTIMIZERS)}")
    cls = OPTIMIZERS[name]
    allowed = list(rules.RULES[name].torch.settings)
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise ValueError(
            f"optimizer {name!r} ({cls.__module__}.{cls.__qualname__}) has no setting(s) "
            f"{unknown}; its settings are {allowed} (its module, {rules.MODULES[name]})"
        )
    return cls(params, **settings)
