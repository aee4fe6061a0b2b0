"""What the two training backends share: the log grid, the metrics' names, the crossing
thresholds and the finite checks' rules. A leaf: it imports nothing from attnbias (nor
torch), so the compiled path, the torch loop, the dispatcher and the claims all read one
definition.

Shared here, because both backends compute them from plain numbers or names:
  log_grid                  the iterations at which metrics are logged;
  CROSSING_THRESHOLDS       1 - cos(W_t, W_mm) thresholds whose first crossing is recorded
                            every step, and their metric names (crossing_metric);
  PER_SAMPLE_LIMIT          up to how many samples the optimal softmax is logged per sample;
  logged_metrics            the names a run logs, in the backends' order (the dispatcher fills
                            a diverged torch run with NaN under these names);
  allowed_nan, acceptable   where a metric may be NaN, and the finite test itself, written
                            once against an array module (numpy or torch, passed in), so the
                            torch side stays on its device;
  NonFiniteError, check_finite   the one error a diverged run raises, and the one check
                            that raises it (xp-generic too: one device read for torch).

The metric formulas over the training state (losses, softmaxes, cosines) are shared too,
written once against an array module in metric_formulas; each backend computes only their
inputs, its own way: the kernel in numpy from token coordinates (token_problem), the torch
loop from its forward pass on the device (so nothing is copied off a GPU, and torch stays
out of the torch-free job). tests/training/test_kernel.py holds the two backends equal to 1e-10.
"""

from __future__ import annotations

import numpy as np

# 1 - cos(W_t, W_mm) thresholds whose first crossing each run records exactly (every step,
# not on the log grid); the claims table compares optimizers by them.
CROSSING_THRESHOLDS = (1e-2, 1e-3)
# Up to this many samples, the optimal token's softmax is also logged per sample (fig8).
PER_SAMPLE_LIMIT = 4


def log_grid(iterations: int, points: int, spacing: str = "log") -> np.ndarray:
    """Iterations at which metrics are logged: always 0 and `iterations`."""
    if spacing == "log":
        grid = np.geomspace(1, iterations, num=points) if iterations >= 1 else []
    elif spacing == "linear":
        grid = np.linspace(0, iterations, num=points)
    else:
        raise ValueError(f"grid spacing must be 'log' or 'linear', got {spacing!r}")
    return np.unique(np.concatenate([[0, iterations], np.rint(grid)]).astype(np.int64))


def crossing_metric(threshold: float) -> str:
    """The metric holding the first iteration with 1 - cos(W_t, W_mm) < threshold."""
    return f"first_gap_W_below_{threshold:g}"


def per_sample_metric(sample: int) -> str:
    """The metric holding one sample's optimal softmax (n <= PER_SAMPLE_LIMIT)."""
    return f"opt_softmax_{sample}"


CROSSING_METRICS = tuple(crossing_metric(thr) for thr in CROSSING_THRESHOLDS)


def logged_metrics(n: int, train_u: bool) -> tuple[str, ...]:
    """The metrics a run of n samples logs at every grid iteration, in the backends' order
    (the crossings, logged once, are CROSSING_METRICS)."""
    per_sample = tuple(per_sample_metric(i) for i in range(n)) if n <= PER_SAMPLE_LIMIT else ()
    head = ("log_loss", "loss", "W_norm", "u_norm", "opt_softmax", "log1m_opt_softmax")
    decoder = ("alignment_u", "gap_u", "log_loss_ratio", "min_score_gap")
    tail = decoder if train_u else ("log_excess_loss",)
    steps = ("max_log_step_W", "log_step_W")  # the loop adds the step at t after the row
    return (*head, "min_opt_softmax", *per_sample, "alignment_W", "gap_W", *tail, *steps)


def allowed_nan(name: str, out: dict):
    """Where a metric may be NaN for a reason: the direction of W or u while it is zero,
    the log of a negative excess loss, the step after the last one, the largest step
    before the first (or of a direction rule, which has no step length)."""
    if name in ("alignment_W", "gap_W"):
        return out["W_norm"] == 0 if "W_norm" in out else False
    if name in ("alignment_u", "gap_u"):
        return out["u_norm"] == 0 if "u_norm" in out else False
    return name in ("log_excess_loss", "log_step_W", "max_log_step_W")


def acceptable(name: str, value, out: dict, xp):
    """Elementwise: `value` (metric `name` of the row `out`) is finite or an allowed NaN.
    xp: the array module of `value` (numpy or torch), so no array changes device."""
    return xp.isfinite(value) | (allowed_nan(name, out) & xp.isnan(value))


def finite_runs(out: dict, params: dict, xp=np):
    """(B,): whether each run's logged metrics `out` and parameters are finite (allowed
    NaNs aside), in their module xp: the runs the loop keeps with nonfinite="nan"."""
    ok = None
    for name, value in (*out.items(), *params.items()):
        good = acceptable(name, value, out, xp) if name in out else xp.isfinite(value)
        good = good.reshape(len(good), -1).all(1) if good.ndim > 1 else good
        ok = good if ok is None else ok & good
    return ok


class NonFiniteError(FloatingPointError):
    """A parameter or a logged metric is NaN or infinite: the run has diverged."""


def check_finite(out: dict, params: dict, t: int, caption: str, xp) -> None:
    """Raise NonFiniteError naming every value ("metric log_loss", "parameter W") that is
    not finite (allowed NaNs aside) in the logged row `out` or the parameters `params`, at
    iteration t of the optimizer `caption`. xp: the arrays' module (numpy or torch); the
    flags are stacked and read at once, one device sync on a GPU. Nothing is repaired: a
    non-finite step leaves a non-finite parameter, which the next logged iteration finds."""
    checks = {f"metric {name}": xp.all(acceptable(name, v, out, xp)) for name, v in out.items()}
    checks |= {f"parameter {name}": xp.all(xp.isfinite(v)) for name, v in params.items()}
    flags = xp.stack(list(checks.values())).tolist()  # one read (from the device)
    bad = [name for name, ok in zip(checks, flags, strict=True) if not ok]
    if bad:
        raise NonFiniteError(
            f"training diverged: {', '.join(bad)} not finite at iteration {t} ({caption})"
        )
