"""The arithmetic of the direction rules (attnbias.optim.rules: sign, nsd, muon, adam,
mirror, kq) on the full W and u, in numpy: steepest-descent directions in a norm, the
schedule, and the bookkeeping of scales.

Scales. A gradient block comes as e^s G~ (model.gradient_weights.ScaledGradient), and
under the exponential loss s falls far below log(smallest float). A normalized direction
(sign, l_p, U V^T) reads G~ alone: it is scale invariant. Rules whose state mixes gradients
of different steps (Adam's m and v, Muon's M) or sets them against an absolute constant
(Adam's eps) are not: there each stored sum is kept as e^a S~ with its own log scale a
(accumulate), and Adam's m / (sqrt(v) + eps) takes its per-run factors in logs, so the
step is the one
exact arithmetic gives (eps dominating once sqrt(v) < eps), never 0 / eps or inf / inf.

The spectral direction. Every gradient in W is L Q (L: (B, d, n), Q: the n query tokens as
rows; gradients.w_gradient), and so is Muon's M, a sum of them. With Q^T = Qr R (thin QR,
once per problem), L Q = (L R^T) Qr^T, and with L R^T = U S V^T (an SVD of d x n) the
polar factor of L Q is U (Qr V)^T: no SVD of a d x d matrix (QueryBasis.polar).

The polar factor's cut-off. U V^T weighs every kept singular direction equally, and on DM
the gradient's singular values are graded over many orders (saturated samples weigh
e^-(their margin)): which small ones count is decided by where the sum stops. Kept are the
singular values above `cutoff` times the largest (the rules' `polar_cutoff` setting, part
of the rule): a relative cut-off far above the rounding floor (max(d, n) eps ~ 2e-14), so
that no singular value whose direction rounding decides (those near the floor) is counted,
and another summation order gives the same run. docs/geometry.md, "Rounding", has the
measured sensitivity to the cut-off and to the summation order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnbias.optim.lp_norm import P_RANGE, parse_lp

SCHEDULES = ("constant", "sqrt")
# descent norms: "max" (entrywise l_inf), "spectral", "l<p>" (entrywise l_p: lp_norm)


def descent_norm(name) -> tuple[str, float | None]:
    """(kind, p) of a steepest-descent norm name: ("max", None), ("spectral", None) or
    ("lp", p); ValueError naming the string otherwise."""
    if name in ("max", "spectral"):
        return name, None
    p = parse_lp(name)  # an l_p norm's p in range, in its one spelling (lp_norm)
    if p is None:
        raise ValueError(f"norm must be 'max', 'spectral' or 'l<p>' with {P_RANGE}, got {name!r}")
    return "lp", p


def step_size(spec, block: str, t: int) -> float:
    """lr_t of `block` at step t: lr (schedule "constant") or lr / sqrt(t + 1) ("sqrt")."""
    lr = spec.lr_of(block)
    return lr / math.sqrt(t + 1) if spec.schedule == "sqrt" else lr


def check_polar_cutoff(spec) -> None:
    """The polar factor's relative cut-off (module doc): in (0, 1)."""
    if not 0.0 < spec.polar_cutoff < 1.0:
        raise ValueError(f"polar_cutoff must lie in (0, 1), got {spec.polar_cutoff}")


def with_polar_cutoff(caption: str, spec) -> str:
    """A spectral rule's caption, with its polar factor's cut-off."""
    return f"{caption} polar_cutoff={spec.polar_cutoff:g}"


def check_schedule(spec) -> None:
    if spec.schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {spec.schedule!r}")


def with_schedule(caption: str, spec) -> str:
    """A rule's caption, with its schedule where the step decays."""
    return caption + (" / sqrt(t+1)" if spec.schedule == "sqrt" else "")


@dataclass(frozen=True)
class QueryBasis:
    """The queries Q (B, n, d) and the thin QR Q^T = Qr R: see the module doc."""

    Q: np.ndarray
    Qr: np.ndarray  # (B, d, n)
    R: np.ndarray  # (B, n, n)

    @classmethod
    def of(cls, Q: np.ndarray) -> QueryBasis:
        Qr, R = np.linalg.qr(np.swapaxes(Q, 1, 2))
        return cls(Q, Qr, R)

    def full(self, left: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """left @ Q, (B, d, d), into `out` where given."""
        return np.matmul(left, self.Q, out=out)

    def polar(self, left: np.ndarray, cutoff: float) -> np.ndarray:
        """U V^T of left @ Q over its singular values above `cutoff` times the largest
        (B, d, d): see the module doc; 0 where it is 0."""
        U, S, Vt = np.linalg.svd(left @ np.swapaxes(self.R, 1, 2), full_matrices=False)
        keep = S > S[:, :1] * cutoff
        return (U * keep[:, None, :]) @ (Vt @ np.swapaxes(self.Qr, 1, 2))


class Block:
    """One gradient block for a direction rule: e^log_scale * G~ per run. For W, G~ =
    left @ Q (basis), formed on first use of `direction` (the spectral rules never need it),
    into `out` where given: the stepper's buffer, reused every step, so that no (B, d, d)
    array is allocated per step (a fresh one costs its page faults: glibc hands the freed
    ones back to the system). A rule may overwrite `direction` in place (it is the step's
    scratch), and keeps no reference to it past its step."""

    def __init__(
        self, log_scale, direction=None, left=None, basis: QueryBasis | None = None, out=None
    ):
        self.log_scale = log_scale  # (B,)
        self._direction = direction  # (B, d, d) or (B, d)
        self.left = left  # (B, d, n) for W
        self.basis = basis
        self._out = out

    @property
    def direction(self) -> np.ndarray:
        if self._direction is None:
            self._direction = self.basis.full(self.left, self._out)
        return self._direction


def per_run(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    """Per-run values (B,) shaped to broadcast over `like` (B, ...)."""
    return values.reshape(-1, *([1] * (like.ndim - 1)))


def coefficient(log_coef: np.ndarray) -> np.ndarray:
    """e^log_coef per run, 0 where it is -inf (a zero gradient takes no step, never 0 * inf)."""
    return np.where(np.isneginf(log_coef), 0.0, np.exp(log_coef))


def accumulate(stored, log_decay: float, log_coef: np.ndarray, G: np.ndarray):
    """decay * S + e^log_coef * G for S = e^a S~ stored as (a (B,), S~) (None: S = 0),
    returned as (a', S~') with a' = max(a + log_decay, log_coef) per run: both factors
    e^(a + log_decay - a') and e^(log_coef - a') are at most 1, so nothing overflows, and a
    term far below the other underflows only where it is negligible. S~ is updated in place
    (a new array when stored is None)."""
    if stored is None:
        stored = (np.full(len(G), -math.inf), np.zeros_like(G))
    log_a, S = stored
    top = np.maximum(log_a + log_decay, log_coef)
    safe = np.where(np.isfinite(top), top, 0.0)
    S *= per_run(coefficient(log_a + log_decay - safe), S)
    S += per_run(coefficient(log_coef - safe), G) * G
    return top, S


def steepest(
    kind: str,
    p: float | None,
    block: Block,
    direction=None,
    cutoff: float | None = None,
    scratch: np.ndarray | None = None,
) -> np.ndarray:
    """D = argmax_{||D|| <= 1} <G, D> of the block's G~ (scale free) in the norm `kind`:
    max: sign(G); lp: sign(G) |G|^(q-1) / ||G||_q^(q-1) (1/p + 1/q = 1); spectral: U V^T on
    a matrix over its singular values above `cutoff` times the largest (the module doc),
    G / ||G||_2 on a vector. `direction`: what to take it of instead of G~ (Muon's M, in
    left coordinates L for a matrix L Q: spectral only). `scratch`: an array shaped as G that
    the l_p direction may use for |G| (a rule's buffer made once: no second array per step)."""
    if kind == "spectral" and block.left is not None:  # a matrix: U V^T, via the basis
        if cutoff is None:
            raise ValueError("the spectral direction of a matrix needs its polar cut-off")
        return block.basis.polar(block.left if direction is None else direction, cutoff)
    G = block.direction if direction is None else direction
    if kind == "max":
        return np.sign(G)
    axes = tuple(range(1, G.ndim))
    if kind == "lp":
        return _lp_direction(G, p / (p - 1), axes, scratch)
    # spectral on a vector (u): its spectral norm is l_2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(G / np.linalg.norm(G, axis=1, keepdims=True))


def _lp_direction(G: np.ndarray, q: float, axes: tuple, scratch=None) -> np.ndarray:
    """sign(G) |G|^(q-1) / ||G||_q^(q-1) (1/p + 1/q = 1), on G scaled to a largest entry of
    1 per run, so no power overflows; a zero block gives D = 0. |G|^q is formed as
    |G|^(q-1) |G|: one fractional power, the costly pass (numpy's ** takes q - 1 = 1/2, i.e.
    p = 3, as a square root). |G| goes into `scratch` where given."""
    a = np.abs(G, out=scratch)
    top = np.max(a, axis=axes)
    a /= per_run(np.where(top > 0, top, 1.0), a)  # entries <= 1; a zero block stays 0
    powered = a ** (q - 1)
    a *= powered  # a^q
    norm = np.sum(a, axis=axes) ** ((q - 1) / q)
    powered /= per_run(np.where(norm > 0, norm, 1.0), powered)
    return np.copysign(powered, G, out=powered)


# ---- normalised steps (mirror, kq: the neighbours' algorithms) ------------------------

# `dual_normalize`: none, the gradient as it is; per_block, each block (W, or kq's K and Q,
# and u) divided by its own gradient's dual norm; global, all blocks by one dual norm
DUAL_NORMALIZATIONS = ("none", "per_block", "global")


def check_dual_normalize(spec) -> None:
    if spec.dual_normalize not in DUAL_NORMALIZATIONS:
        raise ValueError(
            f"dual_normalize must be one of {DUAL_NORMALIZATIONS}, got {spec.dual_normalize!r}"
        )


def with_dual_normalize(caption: str, spec, dual: str) -> str:
    """A rule's caption, with its normalisation where it has one (dual: the norm's name)."""
    if spec.dual_normalize == "none":
        return caption
    how = "each block" if spec.dual_normalize == "per_block" else "all blocks"
    return f"{caption}, {how} / ||grad||_{dual}"


def log_norm(G: np.ndarray, q: float) -> np.ndarray:
    """log ||G_b||_q (entrywise) per run b of G (B, ...), exact for entries of any size (on
    G scaled to a largest entry of 1); -inf for a zero block."""
    axes = tuple(range(1, G.ndim))
    top = np.max(np.abs(G), axis=axes)
    safe = np.where(top > 0, top, 1.0)
    scaled = np.abs(G) / per_run(safe, G)
    with np.errstate(divide="ignore"):
        return np.where(top > 0, np.log(safe) + np.log(np.sum(scaled**q, axis=axes)) / q, -math.inf)


def log_coefficients(spec, lrs: dict, blocks: dict, q: float) -> dict:
    """The log multiplier of each block's G~ in its step, lr_b e^s_b G~_b / N, for blocks
    {name: (s (B,), G~)} of gradients e^s G~: N = 1 (dual_normalize none), the block's own
    ||e^s G~||_q (per_block: lr_b G~ / ||G~||_q, the scale cancels, so a step never
    vanishes with an underflowing loss), or one l_q norm over all blocks (global). A zero
    block takes no step (-inf)."""
    how = spec.dual_normalize
    if how == "none":
        return {name: math.log(lrs[name]) + s for name, (s, _) in blocks.items()}
    own = {name: log_norm(G, q) for name, (_, G) in blocks.items()}  # log ||G~||_q
    if how == "per_block":  # lr G~ / ||G~||_q: e^s cancels exactly, never formed
        return {name: _no_step_where_zero(math.log(lrs[name]) - v, v) for name, v in own.items()}
    # one norm N over all blocks: log N = logsumexp_b(q (s_b + log ||G~_b||)) / q
    stacked = q * np.stack([blocks[name][0] + v for name, v in own.items()])
    top = np.max(stacked, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        log_total = (safe + np.log(np.sum(np.exp(stacked - safe), axis=0))) / q
    return {
        name: _no_step_where_zero(math.log(lrs[name]) + s - log_total, own[name])
        for name, (s, _) in blocks.items()
    }


def _no_step_where_zero(log_coef: np.ndarray, log_own_norm: np.ndarray) -> np.ndarray:
    """-inf (no step) where the block's gradient is zero, never an inf or NaN step."""
    return np.where(np.isneginf(log_own_norm), -math.inf, log_coef)
