"""The arithmetic of the direction rules (attnbias.optim.rules: sign, nsd, muon, adam,
mirror, kq) on the full W and u, in numpy: steepest-descent directions in a norm, the
schedule, and the bookkeeping of scales.

Scales. A gradient block comes as e^s G~ (model.gradient_weights.ScaledGradient), and
under the exponential loss s falls far below log(smallest float). A normalized direction
(sign, l_p, U V^T) reads G~ alone: it is scale invariant. Rules whose state mixes gradients
of different steps (Adam's m and v, Muon's M) or sets them against an absolute constant
(Adam's eps) are not: there each stored sum is kept as e^a S~ with its own log scale a
(log_scaled_sum), and Adam's m / (sqrt(v) + eps) is formed in logs, so the step is the one
exact arithmetic gives (eps dominating once sqrt(v) < eps), never 0 / eps or inf / inf.

The spectral direction. Every gradient in W is L Q (L: (B, d, n), Q: the n query tokens as
rows; gradients.w_gradient), and so is Muon's M, a sum of them. With Q^T = Qr R (thin QR,
once per problem), L Q = (L R^T) Qr^T, and with L R^T = U S V^T (an SVD of d x n) the
polar factor of L Q is U (Qr V)^T: no SVD of a d x d matrix (QueryBasis.polar).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

SCHEDULES = ("constant", "sqrt")
# descent norms: "max" (entrywise l_inf), "spectral", "l<p>" (entrywise l_p, p > 1)
_LP = re.compile(r"^l(\d+(\.\d+)?)$")


def descent_norm(name) -> tuple[str, float | None]:
    """(kind, p) of a steepest-descent norm name: ("max", None), ("spectral", None) or
    ("lp", p); ValueError naming the string otherwise."""
    if name in ("max", "spectral"):
        return name, None
    match = _LP.match(name) if isinstance(name, str) else None
    if match is None or float(match.group(1)) <= 1:
        raise ValueError(
            f"norm must be 'max', 'spectral' or 'l<p>' with p > 1 (e.g. 'l3'), got {name!r}"
        )
    return "lp", float(match.group(1))


def step_size(spec, block: str, t: int) -> float:
    """lr_t of `block` at step t: lr (schedule "constant") or lr / sqrt(t + 1) ("sqrt")."""
    lr = spec.lr_of(block)
    return lr / math.sqrt(t + 1) if spec.schedule == "sqrt" else lr


def check_schedule(spec) -> None:
    if spec.schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {spec.schedule!r}")


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

    def full(self, left: np.ndarray) -> np.ndarray:
        """left @ Q, (B, d, d)."""
        return left @ self.Q

    def polar(self, left: np.ndarray) -> np.ndarray:
        """U V^T of left @ Q over its nonzero singular values (B, d, d); 0 where it is 0."""
        U, S, Vt = np.linalg.svd(left @ np.swapaxes(self.R, 1, 2), full_matrices=False)
        keep = S > S[:, :1] * (max(left.shape[1:]) * np.finfo(float).eps)
        return (U * keep[:, None, :]) @ (Vt @ np.swapaxes(self.Qr, 1, 2))


@dataclass
class Block:
    """One gradient block for a direction rule: e^log_scale * G~ per run. For W, G~ =
    left @ Q (basis) and `direction` is that product, formed once per step."""

    log_scale: np.ndarray  # (B,)
    direction: np.ndarray  # (B, d, d) or (B, d)
    left: np.ndarray | None = None  # (B, d, n) for W
    basis: QueryBasis | None = None


def _per_run(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    return values.reshape(-1, *([1] * (like.ndim - 1)))


def coefficient(log_coef: np.ndarray) -> np.ndarray:
    """e^log_coef per run, 0 where it is -inf (a zero gradient takes no step, never 0 * inf)."""
    return np.where(np.isneginf(log_coef), 0.0, np.exp(log_coef))


def log_scaled_sum(terms) -> tuple[np.ndarray, np.ndarray]:
    """sum_k e^{c_k} S_k as (a, S~) with e^a S~ equal to it and a = max_k c_k per run (terms:
    (c_k (B,), S_k) pairs): every coefficient e^{c_k - a} is at most 1, so nothing overflows,
    and a term far below the largest underflows only where it is negligible."""
    top = np.max(np.stack([c for c, _ in terms]), axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    total = sum(_per_run(coefficient(c - safe), S) * S for c, S in terms)
    return top, total


def steepest(kind: str, p: float | None, block: Block, direction=None) -> np.ndarray:
    """D = argmax_{||D|| <= 1} <G, D> of the block's G~ (scale free) in the norm `kind`:
    max: sign(G); lp: sign(G) |G|^(q-1) / ||G||_q^(q-1) (1/p + 1/q = 1); spectral: U V^T on
    a matrix, G / ||G||_2 on a vector. `direction`: G~ in left coordinates for a matrix
    (Muon's M), else block.direction."""
    G = block.direction if direction is None else direction
    if kind == "max":
        return np.sign(G)
    axes = tuple(range(1, G.ndim))
    if kind == "lp":
        q = p / (p - 1)
        with np.errstate(invalid="ignore", divide="ignore"):  # a zero block: D = 0
            a = np.abs(G) / _per_run(np.max(np.abs(G), axis=axes), G)  # entries <= 1
            powered = np.nan_to_num(a ** (q - 1))
            norm = np.sum(np.nan_to_num(a**q), axis=axes) ** ((q - 1) / q)
            return np.nan_to_num(np.sign(G) * powered / _per_run(norm, G))
    if G.ndim == 2:  # a vector (u): its spectral norm is l_2
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nan_to_num(G / np.linalg.norm(G, axis=1, keepdims=True))
    left = block.left if direction is None else direction
    return block.basis.polar(left)
