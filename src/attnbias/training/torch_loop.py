"""The step of (W, u) in torch, batched over independent runs: TorchStepper, the reference
stepper of training.loop (CUDA, float32, and the tests' oracle of the compiled kernel), in
the coordinates A of W = W0 + A Q. The loop owns the walk, checks and tables; the metrics'
formulas are metric_formulas', fed from its forward pass on the device."""

from __future__ import annotations

from functools import partial

import torch

from attnbias.model import attention, gradients
from attnbias.model.arrays import log_mean
from attnbias.model.attention import Forward, Problem
from attnbias.optim.full_batch import Optimizer
from attnbias.training import metric_formulas
from attnbias.training.devices import resolve_device
from attnbias.training.loop import PerStep, Request


def log_excess_loss(fwd: Forward, loss, f_star, log_loss: torch.Tensor):
    """log|L - f*| and the sign of L - f*, per run (metric_formulas.log_excess_loss)."""
    return metric_formulas.log_excess_loss(
        torch, loss, f_star, log_loss, fwd.scores.gamma_opt, fwd.delta, fwd.log_abs_delta,
        fwd.delta_sign,
    )  # fmt: skip


def excess_loss(fwd: Forward, loss, f_star) -> tuple[torch.Tensor, torch.Tensor]:
    """(log|L - f*|, sign(L - f*)) per run at `fwd`: what the Polyak step reads."""
    return log_excess_loss(fwd, loss, f_star, log_mean(torch, loss.log_value(fwd.margin)))


def metrics(problem: Problem, fwd: Forward, loss, A, u, W_mm, u_mm, train_u, only=None) -> dict:
    """The logged metrics of each run, as (B,) tensors on the device (metric_formulas.row)."""
    return metric_formulas.row(
        torch, loss, problem.W(A), u, W_mm, u_mm, train_u, only,
        log_attn=fwd.log_attn, opt=problem.opt, gamma_opt=fwd.scores.gamma_opt,
        gap=fwd.scores.gap, delta=fwd.delta, log_abs_delta=fwd.log_abs_delta,
        delta_sign=fwd.delta_sign, margin=fwd.margin,
    )  # fmt: skip


class TorchStepper(PerStep):
    """The parameters of a batch in torch ({"W": A, "u": u}, on the problem's device), its
    forward pass and one step of full_batch.Optimizer (training.loop's stepper)."""

    xp = torch

    def __init__(self, problem: Problem, request: Request, W_mm, u_mm=None):
        self.problem, self.request, self.train_u = problem, request, request.train_u
        self.W_mm, self.u_mm = (
            None if ref is None else _tensor(problem, ref, len(problem.X)) for ref in (W_mm, u_mm)
        )
        self.params = {"W": problem.zero_coordinates(), "u": problem.u0.clone()}
        self.optimizer = Optimizer(request.spec)
        self.scores = attention.token_scores(problem, self.params["u"])

    def W(self) -> torch.Tensor:
        return self.problem.W(self.params["W"])

    def u(self) -> torch.Tensor:
        return self.params["u"]

    def state(self) -> dict:
        return self.params

    def forward_at(self, t: int) -> Forward:
        if self.train_u and t > 0:
            self.scores = attention.token_scores(self.problem, self.params["u"], check_order=False)
        return attention.forward(self.problem, self.params["W"], self.scores)

    def row(self, t: int) -> dict:
        r, p = self.request, self.params
        return metrics(self.problem, self.forward(t), r.loss, p["W"], p["u"], self.W_mm,
                       self.u_mm, r.train_u, r.only)  # fmt: skip

    def step(self, t: int, fwd: Forward) -> torch.Tensor:
        loss = self.request.loss
        grads = {"W": gradients.w_gradient(self.problem, fwd, loss)}
        if self.train_u:
            grads["u"] = gradients.u_gradient(self.problem, fwd, loss)
        excess = partial(excess_loss, fwd, loss, self.request.spec.f_star)
        # the step size applied at t (multiplier of the gradient): shows where a cap binds
        return self.optimizer.step(self.params, grads, excess)["W"]


def _tensor(problem: Problem, values, runs: int) -> torch.Tensor:
    """A reference (1|B, ...) as a (B, ...) tensor of the problem's dtype and device."""
    values = torch.as_tensor(values, dtype=problem.X.dtype, device=problem.X.device)
    return values.expand(runs, *values.shape[1:])


def problem_of(datasets: list[dict], W0s=None, *, device: str = "cpu", dtype: str = "float64"):
    """The torch batch of datasets of the data file contract (X, y, opt, W0, [u]), with W0s
    one dataset's runs from many initial matrices, on `device` (`auto`: devices)."""
    if W0s is not None:
        datasets = [{**datasets[0], "W0": W0} for W0 in W0s]
    return Problem.from_arrays(datasets, device=resolve_device(device), dtype=getattr(torch, dtype))


__all__ = ["TorchStepper", "metrics", "problem_of"]
