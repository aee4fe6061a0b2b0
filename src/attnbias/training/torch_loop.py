"""Full-batch training of (W, u) with torch, batched over independent runs, with metrics on
a grid: the reference loop (CUDA, float32, and the tests' oracle of the compiled kernel).
Its definitions shared with the kernel are in metrics (grid, names, finite checks) and
metric_formulas (the metrics' formulas, which it feeds from its forward pass)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import torch

from attnbias.model import attention, gradients
from attnbias.model.arrays import log_mean
from attnbias.model.attention import Forward, Problem
from attnbias.model.losses import get_loss
from attnbias.optim.full_batch import Optimizer, OptimizerSpec
from attnbias.training import metric_formulas
from attnbias.training.devices import resolve_device
from attnbias.training.metrics import CROSSING_THRESHOLDS, check_finite, crossing_metric


def log_excess_loss(fwd: Forward, loss, f_star, log_loss: torch.Tensor):
    """log|L - f*| and the sign of L - f*, per run (metric_formulas.log_excess_loss)."""
    return metric_formulas.log_excess_loss(
        torch, loss, f_star, log_loss, fwd.scores.gamma_opt, fwd.delta, fwd.log_abs_delta,
        fwd.delta_sign,
    )  # fmt: skip


def excess_loss(fwd: Forward, loss, f_star) -> tuple[torch.Tensor, torch.Tensor]:
    """(log|L - f*|, sign(L - f*)) per run at `fwd`: what the Polyak step reads."""
    return log_excess_loss(fwd, loss, f_star, log_mean(torch, loss.log_value(fwd.margin)))


def metrics(problem: Problem, fwd: Forward, loss, A, u, W_mm, u_mm, train_u) -> dict:
    """The logged metrics of each run, as (B,) tensors on the device (metric_formulas.row)."""
    return metric_formulas.row(
        torch, loss, problem.W(A), u, W_mm, u_mm, train_u,
        log_attn=fwd.log_attn, opt=problem.opt, gamma_opt=fwd.scores.gamma_opt,
        gap=fwd.scores.gap, delta=fwd.delta, log_abs_delta=fwd.log_abs_delta,
        delta_sign=fwd.delta_sign, margin=fwd.margin,
    )  # fmt: skip


def train(
    problem: Problem,
    spec: OptimizerSpec,
    *,
    iterations: int,
    log_iterations: np.ndarray,
    W_mm: torch.Tensor,
    u_mm: torch.Tensor | None = None,
    train_u: bool = False,
    loss: str = "exponential",
    extra_metrics=None,
) -> tuple[dict[str, np.ndarray], dict[str, torch.Tensor]]:
    """Run `iterations` steps from (W0, u0). extra_metrics(W, u): more metrics {name: (B,)}
    at each logged iteration, from the parameters as numpy (full_matrix.ExtraMetrics;
    outside the finite checks); None changes nothing.

    Returns the metrics, each (B, len(log_iterations)), and the final parameters
    {"W": (B, d, d), "u": (B, d)}.
    """
    if train_u and u_mm is None:
        raise ValueError("training u needs u_mm for its alignment metric")
    if spec.reads("f_star") and spec.f_star == "opt" and train_u:
        raise ValueError(
            "Polyak f*='opt' assumes a fixed decoder; use a number (e.g. 0) when u is trained"
        )
    loss_fn = get_loss(loss)
    params = {"W": problem.zero_coordinates(), "u": problem.u0.clone()}
    optimizer = Optimizer(spec)
    to_log = set(int(t) for t in log_iterations)
    logged: list[dict[str, torch.Tensor]] = []
    crossings = Crossings(CROSSING_THRESHOLDS, W_mm)
    scores = attention.token_scores(problem, params["u"])
    for t in range(iterations + 1):
        if train_u and t > 0:
            scores = attention.token_scores(problem, params["u"], check_order=False)
        fwd = attention.forward(problem, params["W"], scores)
        crossings.update(t, problem.W(params["W"]))
        if t in to_log:
            logged.append(
                metrics(problem, fwd, loss_fn, params["W"], params["u"], W_mm, u_mm, train_u)
            )
            check_finite(logged[-1], params, t, spec.caption(), torch)
            if extra_metrics is not None:
                logged[-1].update(_extra(extra_metrics, problem.W(params["W"]), params["u"]))
        if t == iterations:
            break
        grads = {"W": gradients.w_gradient(problem, fwd, loss_fn)}
        if train_u:
            grads["u"] = gradients.u_gradient(problem, fwd, loss_fn)
        log_steps = optimizer.step(params, grads, partial(excess_loss, fwd, loss_fn, spec.f_star))
        if t in to_log:
            # the step size applied at t (multiplier of the gradient): shows where a cap binds
            step = log_steps["W"]
            logged[-1]["log_step_W"] = torch.where(torch.isfinite(step), step, torch.nan)
    # no step is taken at the last iteration
    logged[-1]["log_step_W"] = torch.full_like(logged[-1]["log_loss"], torch.nan)
    table = {
        name: torch.stack([m[name] for m in logged], dim=1).cpu().numpy() for name in logged[0]
    }
    table.update(crossings.table())
    return table, {"W": problem.W(params["W"]), "u": params["u"]}


def _extra(extra_metrics, W: torch.Tensor, u: torch.Tensor) -> dict[str, torch.Tensor]:
    values = extra_metrics(W.cpu().numpy(), u.cpu().numpy())
    return {name: torch.as_tensor(v, dtype=W.dtype, device=W.device) for name, v in values.items()}


class Crossings:
    """The first iteration at which 1 - cos(W_t, W_mm) falls below each threshold, per run.

    Checked at every iteration (until every run has crossed every threshold), so it is
    exact rather than read off the log grid. Reported as metrics `first_gap_W_below_{thr:g}`
    whose value is the iteration (NaN: not reached within the run).
    """

    def __init__(self, thresholds, W_mm: torch.Tensor):
        self.thresholds = tuple(thresholds)
        self.W_mm = W_mm
        self.first: dict[float, torch.Tensor] = {}  # threshold -> (B,), set on the first update

    def update(self, t: int, W: torch.Tensor) -> None:
        if not self.first:
            nan = torch.full((W.shape[0],), math.nan, dtype=torch.float64)
            self.first = {thr: nan.clone() for thr in self.thresholds}
        pending = [thr for thr in self.thresholds if bool(self.first[thr].isnan().any())]
        if not pending:
            return
        misalignment = metric_formulas.cosine_and_gap(torch, W, self.W_mm)[1].cpu()
        for thr in pending:
            new = self.first[thr].isnan() & (misalignment < thr)
            self.first[thr][new] = float(t)

    def table(self) -> dict[str, np.ndarray]:
        """(B, 1) arrays, to be written at the last logged iteration."""
        return {crossing_metric(thr): self.first[thr].numpy()[:, None] for thr in self.thresholds}


__all__ = ["train", "train_arrays", "metrics"]


def train_arrays(
    datasets: list[dict],
    spec: OptimizerSpec,
    *,
    W_mm: np.ndarray,
    u_mm: np.ndarray | None = None,
    device: str = "cpu",
    dtype: str = "float64",
    **kwargs,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """`train` from and to numpy, as attnbias.training.dispatch calls it: datasets of the data
    file contract (X, y, opt, W0, [u]), W_mm (B|1, d, d), u_mm (B|1, d); the other keyword
    arguments as `train`'s. Returns the metrics table and the final {"W", "u"} as numpy."""
    torch_device = resolve_device(device)
    problem = Problem.from_arrays(datasets, device=torch_device, dtype=getattr(torch, dtype))

    def tensor(values):
        if values is None:
            return None
        return torch.as_tensor(values, dtype=problem.X.dtype, device=torch_device)

    table, final = train(problem, spec, W_mm=tensor(W_mm), u_mm=tensor(u_mm), **kwargs)
    return table, {name: values.cpu().numpy() for name, values in final.items()}
