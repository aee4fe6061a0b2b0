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
computed in numpy from W and u materialised, with the formulas of torch_loop.metrics.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from attnbias.optim.spec import OptimizerSpec
from attnbias.training import kernel_library
from attnbias.training.metrics import (
    CROSSING_METRICS,
    CROSSING_THRESHOLDS,
    PER_SAMPLE_LIMIT,
    acceptable,
    per_sample_metric,
    report_nonfinite,
)
from attnbias.training.token_problem import TokenProblem

LOSS_CODES = {"exponential": 0, "logistic": 1}
# the rules of attnbias.optim.rules that _kernel.c implements, each with all its settings
RULE_CODES = {"gd": 0, "ngd": 1, "polyak": 2}


# Every optimizer setting that _settings hands to the kernel.
KERNEL_SETTINGS = frozenset(
    "rule lr lr_u max_step eta_max f_star momentum normalize decay_W decay_u".split()
)


def supports(spec) -> bool:
    """Whether this kernel implements the optimizer `spec`: a rule of RULE_CODES whose every
    setting (dataclass field) is one the kernel reads, with a normalisation and an f* it
    knows. Any other spec (an optimizer added in attnbias.optim without a kernel
    counterpart) trains on torch: dispatch.backend asks this first."""
    if not dataclasses.is_dataclass(spec) or getattr(spec, "rule", None) not in RULE_CODES:
        return False
    if {field.name for field in dataclasses.fields(spec)} - KERNEL_SETTINGS:
        return False
    f_star_known = spec.f_star == "opt" or isinstance(spec.f_star, (int, float))
    return spec.normalize in ("global", "per_block") and f_star_known


# ---------------------------------------------------------------- metrics (numpy)


def _logsumexp(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """torch.logsumexp: -inf for all -inf, +inf where any is +inf."""
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - top), axis=axis)) + np.squeeze(top, axis)
    inf = np.isinf(x).any(axis=axis) & (np.max(x, axis=axis) == np.inf)
    return np.where(inf, np.inf, out)


def _signed_logsumexp(log_abs, sign, axis=-1):
    top = np.max(log_abs, axis=axis, keepdims=True)
    top = np.where(top == -np.inf, 0.0, top)
    total = np.sum(sign * np.exp(log_abs - top), axis=axis)
    with np.errstate(divide="ignore"):
        return np.log(np.abs(total)) + np.squeeze(top, axis), np.sign(total)


def _softplus(x):
    return np.logaddexp(x, 0.0)


def _log_value(loss, z):
    if loss == "exponential":
        return -z
    x = -z
    small = x < -20
    with np.errstate(divide="ignore"):
        return np.where(small, x - np.exp(x) / 2, np.log(_softplus(np.where(small, 0.0, x))))


def _log_abs_expm1(x, log_abs_x):
    small = np.abs(x) < 1e-8
    with np.errstate(divide="ignore"):
        return np.where(small, log_abs_x + x / 2, np.log(np.abs(np.expm1(np.where(small, 1.0, x)))))


def _log_excess(loss, g, delta, lad, dsign):
    if loss == "exponential":
        return -g + _log_abs_expm1(delta, lad), dsign
    log_abs_r = -g + _log_abs_expm1(delta, lad) - _softplus(-g)
    r = dsign * np.exp(log_abs_r)
    small = log_abs_r < -20
    with np.errstate(divide="ignore"):
        value = np.where(
            small, log_abs_r - r / 2, np.log(np.abs(np.log1p(np.where(small, 1.0, r))))
        )
    return value, dsign


def _cosine_and_gap(P, P_ref):
    axes = tuple(range(1, P.ndim))
    with np.errstate(invalid="ignore", divide="ignore"):  # W = 0: NaN, as in train
        unit = P / np.sqrt(np.sum(P * P, axis=axes, keepdims=True))
        unit_ref = P_ref / np.sqrt(np.sum(P_ref * P_ref, axis=axes, keepdims=True))
    return np.sum(unit * unit_ref, axis=axes), 0.5 * np.sum((unit - unit_ref) ** 2, axis=axes)


def _gap(W, W_mm) -> dict:
    alignment, gap = _cosine_and_gap(W, W_mm)
    return {"gap_W": gap}


def metrics(
    problem: TokenProblem, loss, z, beta, mu, ku, W_mm, u_mm, train_u, signed, only=None
) -> dict:
    """torch_loop.metrics from the token-space state, each (B,). `only` ("study"): log_loss,
    opt_softmax and gap_W alone, what the study reads."""
    B, n, T = problem.B, problem.n, problem.T
    _, gamma_opt, lag, gsign, _ = problem.scores(ku)
    logits = (problem.l0 + z).reshape(B, n, T)
    shifted = logits - logits.max(-1, keepdims=True)
    log_attn = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    attn = np.exp(log_attn)
    terms = log_attn + lag
    if not signed:
        lad = _logsumexp(terms)
        dsign = np.isfinite(lad).astype(np.float64)
        delta = np.exp(lad)
    else:
        lad, dsign = _signed_logsumexp(terms, gsign)
        delta = dsign * np.exp(lad)
    margin = gamma_opt - delta
    log_loss = _logsumexp(_log_value(loss, margin)) - np.log(n)
    W = problem.W(beta)
    if only == "study":
        a_opt = np.take_along_axis(attn, problem.opt[:, :, None], -1)[..., 0]
        return {"log_loss": log_loss, "opt_softmax": a_opt.mean(-1), **_gap(W, W_mm)}
    u = problem.u(mu)
    a_opt = np.take_along_axis(attn, problem.opt[:, :, None], -1)[..., 0]
    is_opt = np.arange(T)[None, None, :] == problem.opt[:, :, None]
    log1m = _logsumexp(np.where(is_opt, -np.inf, log_attn))
    out = {
        "log_loss": log_loss,
        "loss": np.exp(log_loss),
        "W_norm": np.sqrt(np.sum(W * W, axis=(1, 2))),
        "u_norm": np.sqrt(np.sum(u * u, axis=1)),
        "opt_softmax": a_opt.mean(-1),
        "log1m_opt_softmax": _logsumexp(log1m) - np.log(n),
    }
    out["min_opt_softmax"] = a_opt.min(-1)  # Lem. 3 and Lem. 11: non-decreasing
    if n <= PER_SAMPLE_LIMIT:
        for i in range(n):
            out[per_sample_metric(i)] = a_opt[:, i]
    out["alignment_W"], out["gap_W"] = _cosine_and_gap(W, W_mm)
    if train_u:
        out["alignment_u"], out["gap_u"] = _cosine_and_gap(u, u_mm)
        # Lem. 11: the loss ratio across samples stays bounded, the opt score gap grows
        log_losses = _log_value(loss, margin)
        out["log_loss_ratio"] = log_losses.max(-1) - log_losses.min(-1)
        gap = gamma_opt[..., None] - problem.scores(ku)[0]
        out["min_score_gap"] = np.where(is_opt, np.inf, gap).min(-1).min(-1)
    else:
        log_abs, sign = _log_excess(loss, gamma_opt, delta, lad, dsign)
        log_abs_sum, sign = _signed_logsumexp(log_abs, sign)
        out["log_excess_loss"] = np.where(sign >= 0, log_abs_sum - math.log(n), np.nan)
    return out


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
        "lr_w": spec.lr,
        "lr_u": spec.lr_u if spec.lr_u is not None else spec.lr,
        "has_cap": cap is not None,
        "log_cap": math.log(cap) if cap is not None else 0.0,
        "momentum": spec.momentum,
        "f_star_code": f_code,
        "f_star": f_value,
        "decay_w": spec.decay_W,
        "decay_u": spec.decay_u,
    }
    return np.array([float(values[k]) for k in _SETTINGS])


def _finite_runs(out: dict, params: dict) -> np.ndarray:
    """(B,): whether each run's logged metrics and parameters are finite (allowed NaNs aside)."""
    ok = np.ones(len(next(iter(params.values()))), dtype=bool)
    for name, value in out.items():
        good = acceptable(name, value, out, np)
        ok &= good if good.ndim == 1 else good.all(axis=tuple(range(1, good.ndim)))
    for value in params.values():
        ok &= np.isfinite(value).reshape(len(ok), -1).all(axis=1)
    return ok


def check_finite(out: dict, params: dict, t: int, spec: OptimizerSpec) -> None:
    """Raise metrics.NonFiniteError naming the values and iteration t where a logged metric
    or a parameter is not finite (as torch_loop.check_finite)."""
    flags = {f"metric {name}": np.all(acceptable(name, v, out, np)) for name, v in out.items()}
    flags |= {f"parameter {name}": np.isfinite(v).all() for name, v in params.items()}
    report_nonfinite(flags, t, spec.caption())


def check_polyak_fires(spec: OptimizerSpec, row: dict) -> None:
    """A Polyak step with f* at or above the initial loss never steps: refuse it."""
    loss = float(np.exp(np.min(row["log_loss"])))
    if loss > spec.f_star:
        return
    raise ValueError(
        f"Polyak step with f_star={spec.f_star:g} never steps: f* is at or above the initial "
        f"loss ({loss:.6g}); set f_star below it (0 is the infimum of the loss)"
    )


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
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """torch_loop.train on the fast path: same arguments (numpy W_mm (B|1, d, d), u_mm (B|1, d)),
    same metrics table {name: (B, len(log_iterations))} and final {"W", "u"} (numpy).

    only="study": only the metrics the study reads (see `metrics`). nonfinite="nan": instead
    of raising NonFiniteError as torch_loop.train does when a run's loss is not finite at a
    logged iteration, give that run NaN everywhere (metrics and final W, u) and keep the
    others: what dispatch gets from torch_loop.train by splitting the batch (the runs here are
    independent, so they are computed once).
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
    gamma, _, lag, gsign, opt_is_best = problem.scores(ku)
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
                row = metrics(problem, loss, z, beta, mu, ku, W_mm, u_mm, train_u, signed, only)
            logged.append(row)
            if nonfinite == "raise":  # as torch_loop.train: every metric and parameter
                check_finite(row, {"W": beta, "u": mu}, t, spec)
            diverged |= ~_finite_runs(row, {"W": beta, "u": mu})
            if t == 0 and spec.rule == "polyak" and spec.f_star != "opt":
                check_polyak_fires(spec, row)
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
