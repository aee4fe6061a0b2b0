"""The synthetic training loop on the CPU without torch: a compiled C step in token space.

Same model, losses, stable gradient and optimizers as attention / gradients / full_batch /
torch_loop (the torch reference, kept for CUDA and float32 and as the tests' oracle), and
the same metrics, crossings and divergence checks (their shared definitions: metrics). What
differs is only how a step is computed: on the state of token_problem (beta, z = P beta,
and mu, K mu with u trained), by the compiled kernel of kernel_library. Which of the two
trains a run is dispatch's choice; `supports` tells it which optimizers this kernel
implements.

Between two logged iterations the whole loop runs in one compiled call
(kernel_library.segment, no Python per step); at a logged iteration the metrics are
computed in numpy from W and u materialised, with the torch loop's formulas
(metric_formulas: written once for both).
"""

from __future__ import annotations

import math

import numpy as np

from attnbias.model.losses import get_loss
from attnbias.optim import rules
from attnbias.optim.rules.polyak import check_polyak_fires
from attnbias.optim.spec import OptimizerSpec
from attnbias.training import kernel_library, metric_formulas
from attnbias.training.metrics import (
    CROSSING_METRICS,
    CROSSING_THRESHOLDS,
    check_finite,
    finite_runs,
)
from attnbias.training.token_problem import TokenProblem

LOSS_CODES = {"exponential": 0, "logistic": 1}
# the C codes of the rules that _kernel.c implements: those whose module gives one
# (Rule.kernel_code), each with all its settings
RULE_CODES = {r.name: r.kernel_code for r in rules.RULES.values() if r.kernel_code is not None}


# Every optimizer setting that _settings hands to the kernel.
KERNEL_SETTINGS = frozenset(
    "rule lr lr_u max_step eta_max f_star momentum normalize decay_W decay_u".split()
)


def supports(spec) -> bool:
    """Whether this kernel implements the optimizer `spec`, from what its rule declares
    (attnbias.optim.rules): one with a `kernel_code` whose settings are all ones the kernel
    reads, with a normalisation and an f* it knows. Never from the spec's list of fields: a
    setting added to OptimizerSpec for another rule is one this rule does not read, and
    OptimizerSpec refuses it away from its default, so it changes nothing here. Any other
    rule trains elsewhere: dispatch.backend asks this first."""
    entry = rules.RULES.get(getattr(spec, "rule", None))
    if entry is None or entry.name not in RULE_CODES:
        return False
    if {"rule", *entry.shared, *entry.settings} - KERNEL_SETTINGS:
        return False
    f_star_known = spec.f_star == "opt" or isinstance(spec.f_star, (int, float))
    return spec.normalize in ("global", "per_block") and f_star_known


# ---------------------------------------------------------------- the training loop

# settings vector of the kernel, in order
_SETTINGS = (
    "loss",
    "rule",
    "per_block",
    "train_u",
    "opt_is_best",
    "lr_w",
    "lr_u",
    "has_cap",
    "log_cap",
    "momentum",
    "f_star_code",
    "f_star",
    "decay_w",
    "decay_u",
)


def _settings(spec: OptimizerSpec, loss: str, train_u: bool, opt_is_best: bool) -> np.ndarray:
    cap = spec.max_step if spec.rule == "ngd" else spec.eta_max if spec.rule == "polyak" else None
    if spec.f_star == "opt":
        f_code, f_value = 0, 0.0
    elif float(spec.f_star) == 0:
        f_code, f_value = 1, 0.0
    else:
        f_code, f_value = 2, float(spec.f_star)
    values = {
        "loss": LOSS_CODES[loss],
        "rule": RULE_CODES[spec.rule],
        "per_block": spec.normalize == "per_block",
        "train_u": train_u,
        "opt_is_best": opt_is_best,
        "lr_w": spec.lr_of("W"),
        "lr_u": spec.lr_of("u"),
        "has_cap": cap is not None,
        "log_cap": math.log(cap) if cap is not None else 0.0,
        "momentum": spec.momentum,
        "f_star_code": f_code,
        "f_star": f_value,
        "decay_w": spec.decay_W,
        "decay_u": spec.decay_u,
    }
    return np.array([float(values[k]) for k in _SETTINGS])


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
    extra_metrics=None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """torch_loop.train on the fast path: same arguments (numpy W_mm (B|1, d, d), u_mm (B|1, d)),
    same metrics table {name: (B, len(log_iterations))} and final {"W", "u"} (numpy).

    only="study": only the metrics the study reads (metric_formulas.row). nonfinite="nan": instead
    of raising NonFiniteError as torch_loop.train does when a run's loss is not finite at a
    logged iteration, give that run NaN everywhere (metrics and final W, u) and keep the
    others: what dispatch gets from torch_loop.train by splitting the batch (the runs here are
    independent, so they are computed once). extra_metrics(W, u): more metrics {name: (B,)}
    at each logged iteration, from the materialised parameters (full_matrix.ExtraMetrics;
    outside the finite checks); None changes nothing.
    """
    if nonfinite not in ("raise", "nan"):
        raise ValueError(f"nonfinite must be 'raise' or 'nan', got {nonfinite!r}")
    if not supports(spec):
        raise ValueError(
            f"the C kernel does not implement rule {spec.rule!r}; train it with torch "
            "(attnbias.training.torch_loop)"
        )
    if train_u and u_mm is None:
        raise ValueError("training u needs u_mm for its alignment metric")
    if spec.rule == "polyak" and spec.f_star == "opt" and train_u:
        raise ValueError(
            "Polyak f*='opt' assumes a fixed decoder; use a number (e.g. 0) when u is trained"
        )
    if loss not in LOSS_CODES:
        raise ValueError(f"unknown loss {loss!r}; choose one of {sorted(LOSS_CODES)}")
    B, nT = problem.B, problem.n * problem.T
    W_mm = np.broadcast_to(np.asarray(W_mm, dtype=np.float64), (B, problem.d, problem.d))
    if u_mm is not None:
        u_mm = np.broadcast_to(np.asarray(u_mm, dtype=np.float64), (B, problem.d))
    zeros = lambda: np.zeros((B, nT))  # noqa: E731
    beta, z, mu, ku = zeros(), zeros(), zeros(), zeros()
    buffers = [zeros() for _ in range(4)]
    gamma, _, _, lag, gsign, opt_is_best = problem.scores(ku)
    loss_fn = get_loss(loss)
    settings = _settings(spec, loss, train_u, opt_is_best)
    m_mm = np.ascontiguousarray(
        np.einsum("bntd,bde,bne->bnt", problem.X, W_mm, problem.Q).reshape(B, nT)
    )
    w0mm = np.sum(problem.W0 * W_mm, axis=(1, 2))
    w0sq = np.sum(problem.W0 * problem.W0, axis=(1, 2))
    mm_norm = np.sqrt(np.sum(W_mm * W_mm, axis=(1, 2)))
    thresholds = np.array(CROSSING_THRESHOLDS, dtype=np.float64)
    first = np.full((B, len(thresholds)), np.nan)
    first_step = np.full(B, np.nan)
    fixed = [np.ascontiguousarray(a.reshape(B, nT)) for a in (gamma, lag, gsign)]
    grid = sorted({int(t) for t in log_iterations if 0 <= int(t) <= iterations})
    if not grid or grid[0] != 0:
        grid = [0, *grid]
    if grid[-1] != iterations:
        grid.append(iterations)
    to_log = {int(t) for t in log_iterations}
    logged: list[dict] = []
    diverged = np.zeros(B, dtype=bool)
    for k, t in enumerate(grid):
        if t in to_log:
            signed = (not opt_is_best) or (train_u and t > 0)
            with np.errstate(all="ignore"):  # NaN and inf as torch gives them, silently
                row = metric_formulas.row(
                    np, loss_fn, problem.W(beta), problem.u(mu), W_mm, u_mm, train_u, only,
                    **problem.forward(z, ku, signed),
                )  # fmt: skip
            logged.append(row)
            finite = finite_runs(row, {"W": beta, "u": mu})
            if nonfinite == "raise" and not finite.all():  # as torch_loop.train: raise,
                check_finite(row, {"W": beta, "u": mu}, t, spec.caption(), np)  # naming them
            diverged |= ~finite
            if extra_metrics is not None:
                row.update(extra_metrics(problem.W(beta), problem.u(mu)))
            if t == 0 and spec.rule == "polyak":  # the lowest initial loss of the batch
                check_polyak_fires(spec, float(np.exp(np.min(row["log_loss"]))))
        t_next = grid[k + 1] if k + 1 < len(grid) else t
        first_step.fill(np.nan)
        kernel_library.segment(
            t, t_next, settings, problem.P, problem.K, problem.l0, problem.xu0,
            problem.y, problem.opt, *fixed, beta, z, mu, ku, *buffers,
            m_mm, w0mm, w0sq, mm_norm,
            thresholds=thresholds, first=first, first_step=first_step,
        )  # fmt: skip
        if t in to_log:
            logged[-1]["log_step_W"] = np.where(
                np.isfinite(first_step) & (t < iterations), first_step, np.nan
            )
    # no step is taken at the last iteration
    logged[-1]["log_step_W"] = np.full(B, np.nan)
    table = {name: np.stack([m[name] for m in logged], axis=1) for name in logged[0]}
    for j, name in enumerate(CROSSING_METRICS):
        table[name] = first[:, j : j + 1].copy()
    final = {"W": problem.W(beta), "u": problem.u(mu)}
    for values in (*table.values(), *final.values()):
        values[diverged] = np.nan  # (only with nonfinite="nan": else it raised)
    return table, final
