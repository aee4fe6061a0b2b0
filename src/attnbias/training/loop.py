"""The synthetic training loop, one for every backend (training.dispatch picks which).

`train` owns what a batch of runs does whatever computes its steps: the refusals, the walk
over the logged iterations, the logged rows and their finite checks (raise, or NaN for a
diverged run), the rule's check of the start (rules.polyak: an f* that never steps), the
first crossings of 1 - cos(W_t, W_mm), extra metrics and the tables. A stepper supplies
only its state and step: KernelStepper (the compiled C step in token coordinates,
training.kernel), FullMatrixStepper (numpy on the full W, training.full_matrix) and
TorchStepper (torch in token coordinates, training.torch_loop). A stepper is built as
Stepper(problem, request, W_mm, u_mm) and gives:

  xp                    its array module (numpy or torch)
  W_mm, u_mm            the references in its arrays, (B, d, d) and (B, d) (u_mm may be None)
  row(t)                the logged metrics at the current parameters (metric_formulas.row)
  state()               the trained arrays as it holds them ({"W", "u"}), for the checks
  W(), u()              the parameters materialised, (B, d, d) and (B, d)
  advance(t0, t1, crossings)   crossings checked at t0 .. t1, steps t0 .. t1 - 1; returns
                        the log step length of W at t0 (NaN: none, or a direction rule)
  max_log_step()        (B,) the largest finite log step length of W over every step taken
                        so far, not only the logged ones (NaN: none yet, or a direction
                        rule): where a cap binds between two logged rows, and at the last

A stepper that steps in Python derives from PerStep, which walks its steps one by one; the
kernel runs a whole segment in one compiled call and records the crossings into the same
tracker's array (Crossings.first).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnbias.model.arrays import namespace
from attnbias.model.losses import get_loss
from attnbias.optim.rule import Rule
from attnbias.training.metrics import (
    CROSSING_METRICS,
    CROSSING_THRESHOLDS,
    check_finite,
    finite_runs,
)

# W (B, d, d), u (B, d) -> {name: (B,)}: more metrics logged at every logged iteration
ExtraMetrics = Callable[[np.ndarray, np.ndarray], dict]
NONFINITE = ("raise", "nan")


@dataclass(frozen=True)
class Request:
    """What a stepper is asked to train: the optimizer, its rule (resolved once), the loss
    (losses.get_loss), whether u trains, and which metrics a row holds (only)."""

    spec: Any
    rule: Rule
    loss: Any
    train_u: bool
    only: str | None = None


def to_numpy(values) -> np.ndarray:
    """A numpy array of numpy or torch `values` (from the device)."""
    return values if isinstance(values, np.ndarray) else values.detach().cpu().numpy()


class Crossings:
    """The first iteration with 1 - cos(W_t, W_mm) below each threshold, per run (NaN: not
    reached): checked every step, so exact rather than read off the log grid. `first` is a
    C-contiguous (B, thresholds) float64 array the kernel writes in place."""

    def __init__(self, W_mm):
        xp = namespace(W_mm)
        flat = W_mm.reshape(len(W_mm), -1, 1)
        self.unit_mm = flat / xp.sqrt(xp.sum(flat * flat, axis=1, keepdims=True))
        self.thresholds = np.array(CROSSING_THRESHOLDS, dtype=np.float64)
        self.first = np.full((len(W_mm), len(self.thresholds)), math.nan)

    def update(self, t: int, W) -> None:
        pending = np.isnan(self.first)
        if not pending.any():
            return
        # 1 - <W, W_mm> / (|W| |W_mm|) from two dot products per run (no (B, d, d)
        # temporary: this runs every step); the thresholds need no more than its accuracy
        xp = namespace(W)
        flat = W.reshape(len(W), 1, -1)
        dots = (flat @ self.unit_mm)[:, 0, 0]
        norms = xp.sqrt((flat @ xp.swapaxes(flat, 1, 2))[:, 0, 0])
        with np.errstate(all="ignore"):  # NaN where W = 0: no crossing
            gap = to_numpy(1.0 - dots / norms)
        self.first[pending & (gap[:, None] < self.thresholds)] = float(t)

    def table(self) -> dict[str, np.ndarray]:
        return {name: self.first[:, j : j + 1].copy() for j, name in enumerate(CROSSING_METRICS)}


class PerStep:
    """advance() for a stepper that steps in Python: forward(t) (cached for the step after
    a logged row) and step(t, fwd) -> the log step length of W, from the subclass; and
    max_log_step(), the running maximum of the finite ones over every step."""

    _cached: tuple[int, Any] | None = None
    _max_step = None  # the running maximum, in the stepper's arrays (None: no step yet)

    def max_log_step(self):
        if self._max_step is None:
            return namespace(self.W_mm).full_like(self.W_mm[:, 0, 0], math.nan)
        return self._max_step.clone() if hasattr(self._max_step, "clone") else self._max_step.copy()

    def _track(self, log_step) -> None:
        xp = namespace(log_step)
        finite = xp.where(xp.isfinite(log_step), log_step, math.nan)
        self._max_step = finite if self._max_step is None else xp.fmax(self._max_step, finite)

    def forward(self, t: int):
        if self._cached is None or self._cached[0] != t:
            self._cached = (t, self.forward_at(t))
        return self._cached[1]

    def advance(self, t0: int, t1: int, crossings: Crossings):
        first = None
        for t in range(t0, t1 + 1):
            crossings.update(t, self.W())
            if t == t1:
                break
            log_step = self.step(t, self.forward(t))
            self._track(log_step)
            first = log_step if t == t0 else first
        return first


def check_request(spec, train_u: bool, u_mm, nonfinite: str) -> None:
    """The refusals of every backend, before training."""
    if nonfinite not in NONFINITE:
        raise ValueError(f"nonfinite must be 'raise' or 'nan', got {nonfinite!r}")
    if train_u and u_mm is None:
        raise ValueError("training u needs u_mm for its alignment metric")
    if spec.reads("f_star") and spec.f_star == "opt" and train_u:
        raise ValueError(
            "Polyak f*='opt' assumes a fixed decoder; use a number (e.g. 0) when u is trained"
        )


def _named(labels, run: int, error: Exception) -> Exception:
    return error if labels is None else type(error)(f"{labels[run]}: {error}")


def _check_row(row, state, t, spec, labels, nonfinite):
    """(B,) numpy: the runs whose row and state are finite; in raise mode, the first run
    that is not raises NonFiniteError naming it and its values."""
    finite = to_numpy(finite_runs(row, state, namespace(row["log_loss"])))
    if nonfinite == "raise" and not finite.all():
        run = int(np.flatnonzero(~finite)[0])
        one = {k: v[run : run + 1] for k, v in row.items()}
        params = {k: v[run : run + 1] for k, v in state.items()}
        try:
            check_finite(one, params, t, spec.caption(), namespace(row["log_loss"]))
        except FloatingPointError as err:
            raise _named(labels, run, err) from None
    return finite


def _check_start(request: Request, row, finite, labels) -> None:
    """The rule's refusal of its start (rules.polyak: an f* at or above the initial loss),
    asked of each finite run in order, so the first refused is the one named."""
    log_loss = to_numpy(row["log_loss"])
    for run in np.flatnonzero(finite):
        try:
            request.rule.check_start(request.spec, float(np.exp(log_loss[run])))
        except ValueError as err:
            raise _named(labels, int(run), err) from None


def _walk(iterations: int, log_iterations) -> list[int]:
    """The iterations the loop stops at: the logged ones within the run, 0 and the last."""
    inside = {int(t) for t in log_iterations if 0 <= int(t) <= iterations}
    return sorted(inside | {0, iterations})


def train(
    stepper_class,
    problem,
    spec,
    *,
    iterations: int,
    log_iterations,
    W_mm,
    u_mm=None,
    train_u: bool = False,
    loss: str = "exponential",
    only: str | None = None,
    nonfinite: str = "raise",
    extra_metrics: ExtraMetrics | None = None,
    labels: list[str] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Train the batch `problem` with `spec` on `stepper_class` (see the module doc) from
    (W0, u0) for `iterations` steps, W_mm (B|1, d, d), u_mm (B|1, d), in numpy (or the
    stepper's arrays). Returns the metrics table {name: (B, len(logged))} with the crossings
    {name: (B, 1)}, and the final {"W", "u"}, as numpy.

    only="study": the rows hold only what the study reads (metric_formulas.row).
    nonfinite="raise": a run whose logged metric or parameter stops being finite raises
    metrics.NonFiniteError naming it (labels[run] where given, as its rule's refusal of the
    start); "nan": that run gets NaN everywhere (table and final W, u), the others keep
    their numbers (the runs are independent). extra_metrics(W, u): more metrics {name:
    (B,)} at each logged iteration, from copies of the parameters in numpy; not part of the
    finite checks (a measure may be NaN where W = 0).
    """
    check_request(spec, train_u, u_mm, nonfinite)
    request = Request(spec, spec.definition, get_loss(loss), train_u, only)
    stepper = stepper_class(problem, request, W_mm, u_mm)
    xp = stepper.xp
    crossings = Crossings(stepper.W_mm)
    to_log = {int(t) for t in log_iterations}
    walk = _walk(iterations, log_iterations)
    logged: list[dict] = []
    diverged = None
    for k, t in enumerate(walk):
        if t in to_log or t == 0:
            row = stepper.row(t)
            finite = np.ones(len(crossings.first), dtype=bool)
            if t in to_log:
                finite = _check_row(row, stepper.state(), t, spec, labels, nonfinite)
                diverged = ~finite if diverged is None else diverged | ~finite
            if t == 0:
                _check_start(request, row, finite, labels)
            if t in to_log:
                # over the steps before t, every one of them (NaN at t = 0)
                row["max_log_step_W"] = stepper.max_log_step()
                if extra_metrics is not None:  # from copies, in numpy
                    row.update(extra_metrics(*(np.array(to_numpy(stepper.W())),
                                               np.array(to_numpy(stepper.u())))))  # fmt: skip
                logged.append(row)
        t_next = walk[k + 1] if k + 1 < len(walk) else t
        log_step = stepper.advance(t, t_next, crossings)
        if t in to_log and log_step is not None:
            logged[-1]["log_step_W"] = xp.where(xp.isfinite(log_step), log_step, math.nan)
    # no step is taken at the last iteration
    logged[-1]["log_step_W"] = xp.full_like(logged[-1]["log_loss"], math.nan)
    table = {name: to_numpy(_stack([m[name] for m in logged])) for name in logged[0]}
    table.update(crossings.table())
    final = {"W": np.array(to_numpy(stepper.W())), "u": np.array(to_numpy(stepper.u()))}
    for values in (*table.values(), *final.values()):
        values[diverged] = np.nan  # (only with nonfinite="nan": else it raised)
    return table, final


def _stack(values: list):
    """The rows' values of one metric side by side, (B, logged), in their own module."""
    return namespace(values[0]).stack(values, 1)
