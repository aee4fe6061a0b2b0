"""The synthetic training loop on the full W, in numpy: the path of the direction rules
(attnbias.optim.rules: sign, nsd, muon, adam, mirror, kq), whose updates leave the token
coordinates of the C kernel and the torch loop (training.token_problem; docs/layout.md,
"Adding an optimizer"). It trains the step-length rules too (full_batch.Optimizer on numpy
arrays): the tests hold it equal to the kernel on GD and NGD.

Same problem, losses, stable gradients and metrics as the other backends: the forward
quantities in logs (token_problem.TokenProblem.forward_of, model.delta), the gradient's
weights (model.gradient_weights), the logged row (metric_formulas.row), the crossings and
divergence checks (metrics). W is materialised as (B, d, d) float64 and u as (B, d); a step
costs the products X W x_1 (the logits), a^T X (x_bar), w^T X (the gradient's token sums)
and L Q (the gradient G = L Q, with L (B, d, n)), plus the rule's own arithmetic:
benchmarks/full_matrix_step.py measures it against those products done once.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from attnbias.model.gradient_weights import ScaledGradient, u_direction, w_token_sums
from attnbias.model.losses import get_loss
from attnbias.optim import rules
from attnbias.optim.directions import Block, QueryBasis
from attnbias.optim.full_batch import Optimizer
from attnbias.optim.rule import run_seed
from attnbias.optim.rules.polyak import check_polyak_fires
from attnbias.optim.spec import OptimizerSpec
from attnbias.training import metric_formulas
from attnbias.training.metrics import (
    CROSSING_METRICS,
    CROSSING_THRESHOLDS,
    check_finite,
    finite_runs,
)
from attnbias.training.token_problem import TokenProblem

# W (B, d, d), u (B, d) -> {name: (B,)}: more metrics logged at every logged iteration
ExtraMetrics = Callable[[np.ndarray, np.ndarray], dict]


def check_request(spec, train_u: bool, u_mm, loss: str) -> None:
    """The refusals every backend makes before training (kernel.train, torch_loop.train)."""
    if train_u and u_mm is None:
        raise ValueError("training u needs u_mm for its alignment metric")
    if spec.reads("f_star") and spec.f_star == "opt" and train_u:
        raise ValueError(
            "Polyak f*='opt' assumes a fixed decoder; use a number (e.g. 0) when u is trained"
        )
    get_loss(loss)


class _State:
    """The parameters of a batch, their forward quantities and gradients at one iteration."""

    def __init__(self, problem: TokenProblem, loss_fn, train_u: bool):
        self.problem, self.loss_fn, self.train_u = problem, loss_fn, train_u
        self.params = {"W": problem.W0.copy(), "u": problem.u0.copy()}
        self.basis = QueryBasis.of(problem.Q)
        self.scores = problem.scores_of(self._xu())
        self.opt_is_best = self.scores[-1]

    def _xu(self) -> np.ndarray:
        return (self.problem.X @ self.params["u"][:, None, :, None])[..., 0]

    def forward(self, t: int) -> dict:
        """The forward quantities at the current parameters (token_problem.forward_of)."""
        p = self.problem
        if self.train_u and t > 0:
            self.scores = p.scores_of(self._xu())
        Wq = p.Q @ np.swapaxes(self.params["W"], 1, 2)  # (B, n, d): W x_i1 as rows
        logits = (p.X @ Wq[..., None])[..., 0]
        signed = (not self.opt_is_best) or (self.train_u and t > 0)
        return p.forward_of(logits, self.scores, signed)

    def gradients(self, fwd: dict) -> dict[str, Block]:
        """grad_W L (and grad_u L) as geometry.Block: e^log_scale G~, G~ = L Q."""
        p = self.problem
        log_neg_slope = self.loss_fn.log_neg_slope(fwd["margin"])
        x_bar = (np.exp(fwd["log_attn"])[..., None, :] @ p.X)[..., 0, :]
        log_scale, v = w_token_sums(np, log_neg_slope, fwd["log_attn"], self.scores[0], p.X)
        left = np.swapaxes(v, 1, 2) / p.n  # (B, d, n)
        grads = {"W": Block(log_scale, None, left, self.basis)}
        if self.train_u:
            grads["u"] = Block(*u_direction(np, log_neg_slope, p.y, x_bar))
        return grads


def _log_norm(block: Block) -> np.ndarray:
    flat = block.direction.reshape(len(block.direction), 1, -1)
    with np.errstate(divide="ignore"):
        return 0.5 * np.log((flat @ np.swapaxes(flat, 1, 2))[:, 0, 0]) + block.log_scale


class _Stepper:
    """One step of `spec` on the state: a direction rule's Update, or full_batch.Optimizer
    for a step-length rule. Returns the log step length of W (NaN for a direction rule)."""

    def __init__(self, spec: OptimizerSpec, state: _State, loss_fn):
        self.spec, self.state, self.loss_fn = spec, state, loss_fn
        rule = rules.get(spec.rule)
        if rule.gradient_multiple:
            self.optimizer, self.update = Optimizer(spec), None
        else:
            p = state.problem
            seeds = [run_seed(p.X[b], p.W0[b]) for b in range(p.B)]
            self.optimizer, self.update = None, rule.update(spec, state.params, seeds)

    def step(self, t: int, fwd: dict, log_loss: np.ndarray) -> np.ndarray:
        grads = self.state.gradients(fwd)
        params = {name: self.state.params[name] for name in grads}
        if self.update is not None:
            self.update.step(t, params, grads)
            return np.full(len(log_loss), np.nan)
        scaled = {
            name: ScaledGradient(g.log_scale, g.direction, _log_norm(g))
            for name, g in grads.items()
        }

        def excess():
            return metric_formulas.log_excess_loss(
                np, self.loss_fn, self.spec.f_star, log_loss, fwd["gamma_opt"], fwd["delta"],
                fwd["log_abs_delta"], fwd["delta_sign"],
            )  # fmt: skip

        with np.errstate(all="ignore"):
            return self.optimizer.step(params, scaled, excess)["W"]


def train(
    problem: TokenProblem,
    spec: OptimizerSpec,
    *,
    iterations: int,
    log_iterations: np.ndarray,
    W_mm: np.ndarray,
    u_mm: np.ndarray | None = None,
    train_u: bool = False,
    loss: str = "exponential",
    only: str | None = None,
    nonfinite: str = "raise",
    extra_metrics: ExtraMetrics | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """kernel.train on the full W: same arguments, same metrics table {name: (B,
    len(log_iterations))} and final {"W", "u"} (numpy), for any rule of the registry.

    extra_metrics(W, u): more metrics {name: (B,)} at each logged iteration, from copies of
    the parameters; not part of the finite checks (a measure may be NaN where W = 0).
    """
    if nonfinite not in ("raise", "nan"):
        raise ValueError(f"nonfinite must be 'raise' or 'nan', got {nonfinite!r}")
    check_request(spec, train_u, u_mm, loss)
    B, d = problem.B, problem.d
    W_mm = np.broadcast_to(np.asarray(W_mm, dtype=np.float64), (B, d, d))
    if u_mm is not None:
        u_mm = np.broadcast_to(np.asarray(u_mm, dtype=np.float64), (B, d))
    loss_fn = get_loss(loss)
    state = _State(problem, loss_fn, train_u)
    stepper = _Stepper(spec, state, loss_fn)
    crossings = _Crossings(W_mm)
    to_log = {int(t) for t in log_iterations}
    logged: list[dict] = []
    diverged = np.zeros(B, dtype=bool)
    params = state.params
    for t in range(iterations + 1):
        with np.errstate(all="ignore"):  # NaN and inf as torch gives them, silently
            fwd = state.forward(t)
            crossings.update(t, params["W"])
            log_loss = metric_formulas.log_mean(np, loss_fn.log_value(fwd["margin"]))
            if t in to_log:
                row = metric_formulas.row(
                    np, loss_fn, params["W"], params["u"], W_mm, u_mm, train_u, only, **fwd
                )
        if t in to_log:
            finite = finite_runs(row, params)
            if nonfinite == "raise" and not finite.all():
                check_finite(row, params, t, spec.caption(), np)
            diverged |= ~finite
            if t == 0 and spec.reads("f_star") and spec.rule == "polyak":
                check_polyak_fires(spec, float(np.exp(np.min(row["log_loss"]))))
            if extra_metrics is not None:
                row.update(extra_metrics(params["W"].copy(), params["u"].copy()))
            logged.append(row)
        if t == iterations:
            break
        log_step = stepper.step(t, fwd, log_loss)
        if t in to_log:
            logged[-1]["log_step_W"] = np.where(np.isfinite(log_step), log_step, np.nan)
    logged[-1]["log_step_W"] = np.full(B, np.nan)  # no step is taken at the last iteration
    table = {name: np.stack([m[name] for m in logged], axis=1) for name in logged[0]}
    table.update(crossings.table())
    final = {"W": params["W"].copy(), "u": params["u"].copy()}
    for values in (*table.values(), *final.values()):
        values[diverged] = np.nan  # (only with nonfinite="nan": else it raised)
    return table, final


class _Crossings:
    """The first iteration with 1 - cos(W_t, W_mm) below each threshold (as torch_loop's
    Crossings, in numpy): checked every step until every run has crossed every one."""

    def __init__(self, W_mm: np.ndarray):
        flat = W_mm.reshape(len(W_mm), -1, 1)
        self.unit_mm = flat / np.sqrt(np.sum(flat * flat, axis=1, keepdims=True))
        self.first = np.full((len(W_mm), len(CROSSING_THRESHOLDS)), math.nan)

    def update(self, t: int, W: np.ndarray) -> None:
        pending = np.isnan(self.first)
        if not pending.any():
            return
        # 1 - <W, W_mm> / (|W| |W_mm|) from two dot products per run (no (B, d, d) temporary:
        # this runs every step); the threshold tests need no more than its absolute accuracy
        flat = W.reshape(len(W), 1, -1)
        dots = (flat @ self.unit_mm)[:, 0, 0]
        norms = np.sqrt((flat @ np.swapaxes(flat, 1, 2))[:, 0, 0])
        gap = 1.0 - dots / norms
        new = pending & (gap[:, None] < np.array(CROSSING_THRESHOLDS))
        self.first[new] = float(t)

    def table(self) -> dict[str, np.ndarray]:
        return {name: self.first[:, j : j + 1].copy() for j, name in enumerate(CROSSING_METRICS)}
