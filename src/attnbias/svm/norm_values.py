"""The norms of the geometry experiments by name, and their values: numpy only, so that the
claims and figures (whose env has no solver) read norm names without the SVM solvers of
attnbias.svm.norms. Names: "fro", "max" (entrywise l_inf), "spectral", "nuclear" and
"l<p>" (entrywise l_p, p in attnbias.optim.lp_norm's range); on a vector spectral and
nuclear are l2."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnbias.optim.lp_norm import P_RANGE, lp_name, parse_lp

NORM_KINDS = ("fro", "max", "spectral", "nuclear", "lp")
L2_ON_A_VECTOR = ("fro", "spectral", "nuclear")  # the norms that are l2 on a vector


@dataclass(frozen=True)
class Norm:
    kind: str  # one of NORM_KINDS
    p: float | None = None  # the entrywise l_p norm's p (kind "lp" only)

    @property
    def name(self) -> str:
        return lp_name(self.p) if self.kind == "lp" else self.kind

    @property
    def dual_p(self) -> float:
        """q with 1/p + 1/q = 1 (kind "lp")."""
        return self.p / (self.p - 1.0)


def parse_norm(name) -> Norm:
    """The Norm a name spells: "fro", "max", "spectral", "nuclear" or "l<p>" (p in
    lp_norm's range, spelled as lp_norm.lp_name spells it, e.g. "l3", "l1.5"). ValueError
    naming the bad string, and the spelling or the range of p that would do."""
    if isinstance(name, Norm):
        return name
    if name in ("fro", "max", "spectral", "nuclear"):
        return Norm(name)
    p = parse_lp(name)
    if p is not None:
        return Norm("lp", p)
    raise ValueError(
        f"unknown norm {name!r}: use 'fro', 'max' (entrywise l_inf), 'spectral', 'nuclear' "
        f"or 'l<p>' for the entrywise l_p norm, {P_RANGE}"
    )


def _singular_values(M: np.ndarray) -> np.ndarray:
    return np.linalg.svd(M, compute_uv=False)


def _entrywise(M: np.ndarray, p: float) -> float:
    flat = np.abs(np.ravel(M))
    if p == math.inf:
        return float(flat.max(initial=0.0))
    scale = flat.max(initial=0.0)  # |M|^p of large or small entries would overflow
    if scale == 0:
        return 0.0
    return float(scale * np.sum((flat / scale) ** p) ** (1.0 / p))


def norm_value(M: np.ndarray, norm) -> float:
    """||M|| for a (d, d) matrix or a (d,) vector (spectral, nuclear: l2 on a vector)."""
    norm = parse_norm(norm)
    M = np.asarray(M, dtype=float)
    if M.ndim == 1 and norm.kind in L2_ON_A_VECTOR:  # no singular values of a vector
        return float(np.linalg.norm(M))
    if norm.kind == "max":
        return _entrywise(M, math.inf)
    if norm.kind == "lp":
        return _entrywise(M, norm.p)
    if norm.kind == "spectral":
        return float(_singular_values(M).max())
    if norm.kind == "nuclear":
        return float(_singular_values(M).sum())
    return float(np.linalg.norm(np.ravel(M)))


def dual_norm_value(M: np.ndarray, norm) -> float:
    """The dual norm of M: fro's is fro, max's the entrywise l_1, spectral's nuclear and
    back, l_p's the entrywise l_q (1/p + 1/q = 1)."""
    norm = parse_norm(norm)
    M = np.asarray(M, dtype=float)
    if M.ndim == 1 and norm.kind in L2_ON_A_VECTOR:  # l2 is its own dual
        return float(np.linalg.norm(M))
    if norm.kind == "max":
        return float(np.abs(M).sum())
    if norm.kind == "lp":
        return _entrywise(M, norm.dual_p)
    if norm.kind == "spectral":
        return norm_value(M, "nuclear")
    if norm.kind == "nuclear":
        return norm_value(M, "spectral")
    return norm_value(M, "fro")
