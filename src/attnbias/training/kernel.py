"""The compiled C step on the CPU without torch, in token space: KernelStepper, a stepper
of training.loop (which owns the walk over logged iterations, checks and tables).

Same model, losses, stable gradient and optimizers as attention / gradients / full_batch
(the torch stepper, kept for CUDA and float32 and as the tests' oracle). What differs is
only how a step is computed: on the state of token_problem (beta, z = P beta, and mu, K mu
with u trained), by the compiled kernel of kernel_library. Which stepper trains a run is
dispatch's choice; `supports` tells it which optimizers this kernel implements.

Between two logged iterations the whole segment runs in one compiled call
(kernel_library.segment, no Python per step), which records the first crossings itself
(into the loop's Crossings.first); at a logged iteration the metrics are computed in numpy
from W and u materialised, with the torch stepper's formulas (metric_formulas).
"""

from __future__ import annotations

import math

import numpy as np

from attnbias.optim import rules
from attnbias.training import kernel_library, metric_formulas
from attnbias.training.loop import Crossings, Request
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
    rule trains elsewhere: dispatch.backend asks this first. Its rule: spec.definition."""
    entry = getattr(spec, "definition", None)
    if entry is None or entry.name not in RULE_CODES:
        return False
    if {"rule", *entry.shared, *entry.settings} - KERNEL_SETTINGS:
        return False
    f_star_known = spec.f_star == "opt" or isinstance(spec.f_star, (int, float))
    return spec.normalize in ("global", "per_block") and f_star_known


# ---------------------------------------------------------------- the stepper

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


def _settings(request: Request, loss: str, opt_is_best: bool) -> np.ndarray:
    spec, rule = request.spec, request.rule
    cap = None if rule.cap is None else getattr(spec, rule.cap)  # the rule names its cap
    if spec.f_star == "opt":
        f_code, f_value = 0, 0.0
    elif float(spec.f_star) == 0:
        f_code, f_value = 1, 0.0
    else:
        f_code, f_value = 2, float(spec.f_star)
    values = {
        "loss": LOSS_CODES[loss],
        "rule": rule.kernel_code,
        "per_block": spec.normalize == "per_block",
        "train_u": request.train_u,
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


class KernelStepper:
    """The kernel's state of a batch (token_problem: beta, z = P beta, mu, K mu, momentum
    buffers) and its compiled segments (training.loop's stepper)."""

    xp = np

    def __init__(self, problem: TokenProblem, request: Request, W_mm, u_mm=None):
        if not supports(request.spec):
            raise ValueError(
                f"the C kernel does not implement rule {request.spec.rule!r}; train it with "
                "torch (attnbias.training.torch_loop)"
            )
        self.problem, self.request = problem, request
        B, nT, d = problem.B, problem.n * problem.T, problem.d
        self.W_mm = np.broadcast_to(np.asarray(W_mm, dtype=np.float64), (B, d, d))
        if u_mm is not None:
            u_mm = np.broadcast_to(np.asarray(u_mm, dtype=np.float64), (B, d))
        self.u_mm = u_mm
        zeros = lambda: np.zeros((B, nT))  # noqa: E731
        self.beta, self.z, self.mu, self.ku = zeros(), zeros(), zeros(), zeros()
        self.buffers = [zeros() for _ in range(4)]
        gamma, _, _, lag, gsign, self.opt_is_best = problem.scores(self.ku)
        self.settings = _settings(request, request.loss.name, self.opt_is_best)
        W_mm = self.W_mm
        self.m_mm = np.ascontiguousarray(
            np.einsum("bntd,bde,bne->bnt", problem.X, W_mm, problem.Q).reshape(B, nT)
        )
        self.w0mm = np.sum(problem.W0 * W_mm, axis=(1, 2))
        self.w0sq = np.sum(problem.W0 * problem.W0, axis=(1, 2))
        self.mm_norm = np.sqrt(np.sum(W_mm * W_mm, axis=(1, 2)))
        self.fixed = [np.ascontiguousarray(a.reshape(B, nT)) for a in (gamma, lag, gsign)]
        self.first_step = np.full(B, np.nan)
        self.max_step = np.full(B, np.nan)  # the kernel keeps it across segments

    def W(self) -> np.ndarray:
        return self.problem.W(self.beta)

    def u(self) -> np.ndarray:
        return self.problem.u(self.mu)

    def state(self) -> dict:
        return {"W": self.beta, "u": self.mu}

    def row(self, t: int) -> dict:
        r = self.request
        signed = (not self.opt_is_best) or (r.train_u and t > 0)
        with np.errstate(all="ignore"):  # NaN and inf as torch gives them, silently
            return metric_formulas.row(
                np, r.loss, self.W(), self.u(), self.W_mm, self.u_mm, r.train_u, r.only,
                **self.problem.forward(self.z, self.ku, signed),
            )  # fmt: skip

    def advance(self, t0: int, t1: int, crossings: Crossings) -> np.ndarray:
        p = self.problem
        self.first_step.fill(np.nan)
        kernel_library.segment(
            t0, t1, self.settings, p.P, p.K, p.l0, p.xu0, p.y, p.opt, *self.fixed,
            self.beta, self.z, self.mu, self.ku, *self.buffers,
            self.m_mm, self.w0mm, self.w0sq, self.mm_norm,
            thresholds=crossings.thresholds, first=crossings.first, first_step=self.first_step,
            max_step=self.max_step,
        )  # fmt: skip
        return self.first_step

    def max_log_step(self) -> np.ndarray:
        return self.max_step.copy()
