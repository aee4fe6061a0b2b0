"""The full-batch update rules of the synthetic runs: one entry each (docs/layout.md,
"Adding an optimizer").

Two kinds of rule. A step-length rule (GD, NGD, Polyak step) chooses, for each gradient
block (W, and u when it is trained), the log of its step length: the multiplier of that
block's gradient. full_batch.Optimizer applies it, together with the settings every such
rule takes (SHARED: momentum, Eq. 10's decay factors). Lengths are formed in logs, since a
gradient's norm may be far below the smallest float. A direction rule (sign, nsd, muon,
adam, mirror, kq) returns the update itself, which leaves the span of the gradients: its
entry is a class holding the rule's state per run (optim.geometry has its arithmetic), and
it trains on the full W (training.full_matrix).

What a rule declares decides where it can train (training.dispatch), never a list of
settings: a step-length rule is a gradient multiple, so W - W0 stays in the span of the
x_js x_j1^T and the token-coordinate backends (the C kernel where the entry says `kernel`,
else the torch loop) train it; a direction rule trains on the full W.

A rule declares the settings of OptimizerSpec it reads: the config checks and OptimizerSpec
refuse the others (a setting that would be silently ignored, workflow.configcheck), and
spec.reads answers from it; and `implicit_norm`, the norm whose attention SVM its geometry
is expected to find (docs/layout.md). Its step uses the arrays' own module (numpy or torch,
model.arrays), so this module imports no torch: the workflow's config checks read it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnbias.model.arrays import namespace
from attnbias.optim import geometry

# settings every rule takes: full_batch.Optimizer applies them after the rule's step
SHARED = ("momentum", "decay_W", "decay_u")


@dataclass(frozen=True)
class StepInputs:
    """What a rule's step reads, per run (tensors of shape (B,), one per block)."""

    spec: Any  # the OptimizerSpec
    lrs: dict[str, float]  # lr per block ("u": lr_u where set)
    log_norms: dict[str, Any]  # log ||grad|| per block; one norm over all blocks if "global"
    log_excess: Callable[[], Any]  # log(L - f*) (-inf where L <= f*), computed on demand


def _accept(spec) -> None:
    return None


def _frobenius(spec) -> str:
    return "fro"


@dataclass(frozen=True)
class Rule:
    """One update rule; registered with the `rule` (step length) or `direction_rule`
    decorator below."""

    name: str
    settings: tuple[str, ...]  # the OptimizerSpec settings it reads, besides `shared`
    caption: Callable[[Any], str]  # spec -> the head of its figure caption
    log_step: Callable[[StepInputs], dict[str, Any]] | None  # log step length per block
    check: Callable[[Any], None] = _accept  # spec -> ValueError for a combination it refuses
    implicit_norm: Callable[[Any], str] = _frobenius  # spec -> the SVM norm it should find
    kernel: bool = False  # training/_kernel.c implements it (kernel.RULE_CODES)
    update: type | None = None  # a direction rule: its state and step (see Update)
    shared: tuple[str, ...] = SHARED  # the settings full_batch.Optimizer adds (step rules)

    @property
    def gradient_multiple(self) -> bool:
        """Its update is a multiple of the gradient: W - W0 stays in the token coordinates
        (training.token_problem), where the C kernel and the torch loop train."""
        return self.log_step is not None


RULES: dict[str, Rule] = {}


def _register(entry: Rule) -> None:
    if entry.name in RULES:
        raise ValueError(f"optimizer rule {entry.name!r} is registered twice")
    RULES[entry.name] = entry


def rule(name: str, settings: tuple[str, ...], caption, check=_accept, **declared):
    """Register the decorated function as the log step length of the rule `name` (see
    Rule; `declared`: its implicit_norm, kernel)."""

    def register(log_step):
        _register(Rule(name, settings, caption, log_step, check, **declared))
        return log_step

    return register


def direction_rule(name: str, settings: tuple[str, ...], caption, implicit_norm, check=_accept):
    """Register the decorated Update subclass as the direction rule `name` (see Rule)."""

    def register(update):
        _register(Rule(name, settings, caption, None, check, implicit_norm, False, update, ()))
        return update

    return register


def get(name: str) -> Rule:
    """The rule called `name`; a ValueError naming the known ones otherwise."""
    if name not in RULES:
        raise ValueError(f"unknown optimizer rule {name!r}; choose one of {tuple(RULES)}")
    return RULES[name]


def _full_like(v, value: float):
    return namespace(v).full_like(v, value)


def capped(lengths: dict, cap: float | None) -> dict:
    """Each block's log step length, at most log(cap) (cap None: unchanged)."""
    if cap is None:
        return lengths
    log_cap = math.log(cap)
    return {name: namespace(v).minimum(v, _full_like(v, log_cap)) for name, v in lengths.items()}


# ---------------------------------------------------------------- the rules


@rule("gd", ("lr", "lr_u"), caption=lambda spec: f"GD lr={spec.lr:g}", kernel=True)
def _gd(s: StepInputs) -> dict:
    """W <- W - lr * grad"""
    return {name: _full_like(v, math.log(s.lrs[name])) for name, v in s.log_norms.items()}


@rule(
    "ngd",
    ("lr", "lr_u", "max_step", "normalize"),
    caption=lambda spec: f"NGD lr={spec.lr:g}",
    kernel=True,
)
def _ngd(s: StepInputs) -> dict:
    """W <- W - min(lr / ||grad||, max_step) * grad"""
    lengths = {name: math.log(s.lrs[name]) - v for name, v in s.log_norms.items()}
    return capped(lengths, s.spec.max_step)


def _polyak_global_norm(spec) -> None:
    if spec.normalize == "per_block":
        # (L - f*) / ||g_W||^2 explodes while g_W is tiny next to g_u (at u ~ 0).
        raise ValueError("the Polyak step takes the norm over all blocks: normalize='global'")


def _eta_max(spec) -> str:
    return "none" if spec.eta_max is None else f"{spec.eta_max:g}"


@rule(
    "polyak",
    ("eta_max", "f_star", "normalize"),  # normalize: global only (check)
    caption=lambda spec: f"Polyak step eta_max={_eta_max(spec)}",
    check=_polyak_global_norm,
    kernel=True,
)
def _polyak(s: StepInputs) -> dict:
    """W <- W - min((L - f*) / ||grad||^2, eta_max) * grad"""
    log_excess = s.log_excess()
    return capped({name: log_excess - 2 * v for name, v in s.log_norms.items()}, s.spec.eta_max)


def check_polyak_fires(spec, initial_loss: float) -> None:
    """A Polyak step with a number f* at or above the initial loss never steps: refuse it.
    initial_loss: the lowest of the batch's runs at the first step (both backends ask)."""
    if spec.f_star == "opt" or initial_loss > spec.f_star:
        return
    raise ValueError(
        f"Polyak step with f_star={spec.f_star:g} never steps: f* is at or above the initial "
        f"loss ({initial_loss:.6g}); set f_star below it (0 is the infimum of the loss)"
    )


# ---------------------------------------------------------------- direction rules


class Update:
    """A direction rule's state over a batch of B runs, and its step (numpy, full W).

    Built from the spec, the starting parameters {"W": (B, d, d), "u": (B, d)} (which it may
    move, as kq does, in place) and one seed per run (kq's start); step(t, params, grads)
    updates the trained blocks of `params` in place from grads {name: geometry.Block}.
    """

    def __init__(self, spec, params: dict, seeds: list[int]):
        self.spec = spec
        self.state: dict[str, Any] = {}

    def step(self, t: int, params: dict, grads: dict) -> None:
        raise NotImplementedError


def _with_schedule(text: str, spec) -> str:
    return text + (" / sqrt(t+1)" if spec.schedule == "sqrt" else "")


def _steepest_check(spec) -> None:
    geometry.check_schedule(spec)
    geometry.descent_norm(spec.norm)


@direction_rule(
    "sign",
    ("lr", "lr_u", "schedule"),
    caption=lambda s: _with_schedule(f"sign descent lr={s.lr:g}", s),
    implicit_norm=lambda s: "max",
    check=geometry.check_schedule,
)
class _Sign(Update):
    """W <- W - lr_t sign(G) (u likewise)."""

    def step(self, t, params, grads):
        for name, g in grads.items():  # in place: g.direction is the step's scratch
            step = np.sign(g.direction, out=g.direction)
            step *= geometry.step_size(self.spec, name, t)
            params[name] -= step


@direction_rule(
    "nsd",
    ("lr", "lr_u", "schedule", "norm"),
    caption=lambda s: _with_schedule(f"NSD ({s.norm}) lr={s.lr:g}", s),
    implicit_norm=lambda s: s.norm,
    check=_steepest_check,
)
class _NormalizedSteepestDescent(Update):
    """W <- W - lr_t D, D = argmax_{||D|| <= 1} <G, D> in the norm `norm` (u likewise; a
    vector's spectral norm is l_2)."""

    def step(self, t, params, grads):
        kind, p = geometry.descent_norm(self.spec.norm)
        for name, g in grads.items():
            step = geometry.step_size(self.spec, name, t)
            params[name] -= step * geometry.steepest(kind, p, g)


def _muon_check(spec) -> None:
    geometry.check_schedule(spec)
    if not 0.0 <= spec.beta < 1.0:
        raise ValueError(f"beta must lie in [0, 1), got {spec.beta}")


@direction_rule(
    "muon",
    ("lr", "lr_u", "schedule", "beta"),
    caption=lambda s: _with_schedule(f"Muon beta={s.beta:g} lr={s.lr:g}", s),
    implicit_norm=lambda s: "spectral",
    check=_muon_check,
)
class _Muon(Update):
    """M <- beta M + G, W <- W - lr_t U V^T(M) (beta 0: spectral descent); on u, M / ||M||.
    M is kept as e^a M~ (geometry.accumulate: it mixes gradients of different scales),
    for W in the left coordinates of M = L Q (geometry.QueryBasis)."""

    def step(self, t, params, grads):
        log_beta = math.log(self.spec.beta) if self.spec.beta > 0 else -math.inf
        for name, g in grads.items():
            current = g.direction if g.left is None else g.left
            self.state[name] = geometry.accumulate(
                self.state.get(name), log_beta, g.log_scale, current
            )
            M = self.state[name][1]
            step = geometry.step_size(self.spec, name, t)
            params[name] -= step * geometry.steepest("spectral", None, g, direction=M)


def _adam_check(spec) -> None:
    geometry.check_schedule(spec)
    if not (0.0 <= spec.beta1 < 1.0 and 0.0 <= spec.beta2 < 1.0):
        raise ValueError(f"beta1, beta2 must lie in [0, 1), got {spec.beta1}, {spec.beta2}")
    if not spec.eps > 0:
        raise ValueError(f"eps must be > 0, got {spec.eps}")


def _log_or_minus_inf(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


@direction_rule(
    "adam",
    ("lr", "lr_u", "schedule", "beta1", "beta2", "eps"),
    caption=lambda s: _with_schedule(
        f"Adam lr={s.lr:g} betas=({s.beta1:g}, {s.beta2:g}) eps={s.eps:g}", s
    ),
    implicit_norm=lambda s: "max",
    check=_adam_check,
)
class _Adam(Update):
    """Full-batch Adam with bias correction: m <- b1 m + (1-b1) G, v <- b2 v + (1-b2) G^2,
    W <- W - lr_t m^ / (sqrt(v^) + eps), m^ = m / (1 - b1^(t+1)), v^ likewise. m and v are
    kept as e^a m~, e^c v~ (geometry.accumulate), and the step's per-run factors are formed
    in logs: eps is an absolute scale, so with gradients of e^-700 the plain formula would
    give 0 / eps where exact arithmetic gives m / eps (see geometry's module doc)."""

    def step(self, t, params, grads):
        s = self.spec
        log_b1, log_b2 = _log_or_minus_inf(s.beta1), _log_or_minus_inf(s.beta2)
        for name, g in grads.items():
            G = g.direction
            log_m, m = geometry.accumulate(
                self.state.get((name, "m")), log_b1, g.log_scale + math.log1p(-s.beta1), G
            )
            G *= G  # in place: g.direction is the step's scratch
            log_v, v = geometry.accumulate(
                self.state.get((name, "v")), log_b2, 2 * g.log_scale + math.log1p(-s.beta2), G
            )
            self.state[(name, "m")], self.state[(name, "v")] = (log_m, m), (log_v, v)
            # m^ / (sqrt(v^) + eps) = head m~ / (root sqrt(v~) + e^(log eps - k)), with
            # head = e^(log_m - k) / (1 - b1^(t+1)), root = e^(log_v / 2 - k) / sqrt(1 - b2^(t+1))
            # and k = max(log_v / 2, log eps) per run: no factor above 1, nothing overflows
            k = np.maximum(log_v / 2, math.log(s.eps))
            with np.errstate(invalid="ignore", over="ignore"):
                root = geometry.coefficient(log_v / 2 - k) / math.sqrt(1 - s.beta2 ** (t + 1))
                head = geometry.coefficient(log_m - k) / (1 - s.beta1 ** (t + 1))
            den = np.sqrt(v, out=G)
            den *= _col(root, den)
            den += _col(np.exp(math.log(s.eps) - k), den)
            step = np.divide(m, den, out=den)
            step *= _col(geometry.step_size(s, name, t) * head, step)
            params[name] -= step


def _col(per_run: np.ndarray, like: np.ndarray) -> np.ndarray:
    return per_run.reshape(-1, *([1] * (like.ndim - 1)))


def _mirror_check(spec) -> None:
    if spec.p is None or not spec.p > 1:
        raise ValueError(f"mirror descent needs p > 1 (psi = ||W||_p^p / p), got {spec.p}")


def _signed_power(Z: np.ndarray, power: float) -> np.ndarray:
    """sign(Z) |Z|^power (copysign: one pass fewer than a product with sign(Z))."""
    magnitude = np.abs(Z) ** power
    return np.copysign(magnitude, Z, out=magnitude)


@direction_rule(
    "mirror",
    ("lr", "lr_u", "p"),
    caption=lambda s: f"l_{s.p:g} mirror descent lr={s.lr:g}",
    implicit_norm=lambda s: f"l{s.p:g}",
    check=_mirror_check,
)
class _Mirror(Update):
    """Mirror descent with psi(W) = ||W||_p^p / p (entrywise): the dual variable
    Z = grad psi(W) = sign(W) |W|^(p-1) takes the gradient step, Z <- Z - lr G, and
    W = sign(Z) |Z|^(1/(p-1)). Z starts at grad psi(W0) and is kept per run (u likewise)."""

    def __init__(self, spec, params, seeds):
        super().__init__(spec, params, seeds)
        self.state = {name: _signed_power(value, spec.p - 1) for name, value in params.items()}

    def step(self, t, params, grads):
        for name, g in grads.items():
            coef = geometry.coefficient(math.log(self.spec.lr_of(name)) + g.log_scale)
            self.state[name] -= _col(coef, g.direction) * g.direction
            params[name][...] = _signed_power(self.state[name], 1 / (self.spec.p - 1))


def _kq_check(spec) -> None:
    if not spec.init_scale > 0:
        raise ValueError(f"init_scale must be > 0, got {spec.init_scale}")


def run_seed(*arrays: np.ndarray) -> int:
    """A seed that is a function of one run's data (its arrays' bytes, SHA-256): kq's
    random start is the same wherever and however the run is batched."""
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return int.from_bytes(digest.digest()[:8], "little")


@direction_rule(
    "kq",
    ("lr", "lr_u", "init_scale"),
    caption=lambda s: f"GD on K, Q (W = K Q^T) lr={s.lr:g} init={s.init_scale:g}",
    implicit_norm=lambda s: "nuclear",
    check=_kq_check,
)
class _KeyQuery(Update):
    """GD on K and Q (d x d each), W = W0 + K Q^T; u (when trained) by GD.

    Start: K0, Q0 with i.i.d. N(0, init_scale^2) entries drawn from numpy's default_rng of
    the run's seed (training.full_matrix: rules.run_seed of its X and W0), so W starts at
    W0 + K0 Q0^T, near W0 (example 1 has W0 = 0, where GD on K, Q would never move).
    With G = grad_W L: grad_K = G Q, grad_Q = G^T K."""

    def __init__(self, spec, params, seeds):
        super().__init__(spec, params, seeds)
        d = params["W"].shape[-1]
        draws = [np.random.default_rng(seed).standard_normal((2, d, d)) for seed in seeds]
        factors = spec.init_scale * np.stack(draws)
        self.K, self.Q = factors[:, 0], factors[:, 1]
        self.W0 = params["W"].copy()
        params["W"] += self.K @ np.swapaxes(self.Q, 1, 2)

    def step(self, t, params, grads):
        for name, g in grads.items():
            log_coef = math.log(self.spec.lr_of(name)) + g.log_scale
            coef = _col(geometry.coefficient(log_coef), g.direction)
            if name == "u":
                params["u"] -= coef * g.direction
                continue
            G = coef * g.direction
            self.K, self.Q = self.K - G @ self.Q, self.Q - np.swapaxes(G, 1, 2) @ self.K
            params["W"][...] = self.W0 + self.K @ np.swapaxes(self.Q, 1, 2)
