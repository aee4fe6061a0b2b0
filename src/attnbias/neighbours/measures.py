"""The neighbours' measures of a trained W against an SVM solution.

AttentionMD's directional Bregman divergence (synthetic-data/tools/bregman_div.py, read by
correlation_calculation.py with the run's p): with W̄ = W / ||W||_p and S̄ = S / ||S||_p
(entrywise l_p, p of the run), D_p(W, S) = 1 - <sign(W̄)|W̄|^(p-1), S̄>: the Bregman
divergence of psi = ||.||_p^p / p between the two unit points, 0 where they coincide and
> 0 elsewhere (Hölder). They compute it for every (p of the run, p of the SVM) pair.

TF-as-SVM's correlation (local_converge.ipynb): <W, S> / (||W||_F ||S||_F) of W (or K Q^T)
with the Frobenius and with the nuclear SVM solution.
"""

from __future__ import annotations

import numpy as np


def _lp(M: np.ndarray, p: float) -> float:
    return float(np.sum(np.abs(M) ** p) ** (1 / p))


def bregman_divergence(W: np.ndarray, S: np.ndarray, p: float) -> float:
    """D_p(W, S) of the module doc; ValueError for p <= 1 or a zero W or S."""
    if not p > 1:
        raise ValueError(f"the directional Bregman divergence needs p > 1, got {p}")
    W, S = np.asarray(W, float), np.asarray(S, float)
    if not (_lp(W, p) > 0 and _lp(S, p) > 0):
        raise ValueError("the directional Bregman divergence is undefined at W = 0 or S = 0")
    Wbar, Sbar = W / _lp(W, p), S / _lp(S, p)
    return float(1.0 - np.sum(np.sign(Wbar) * np.abs(Wbar) ** (p - 1) * Sbar))


def divergence_table(runs: dict, solutions: dict) -> dict[tuple[float, float], float]:
    """{(p of the run, p of the SVM): D_{p run}(W_run, S_svm)} for every pair, from
    {p: W of the run with l_p mirror descent} and {p: the l_p SVM solution}."""
    return {
        (p_run, p_svm): bregman_divergence(W, S, p_run)
        for p_run, W in runs.items()
        for p_svm, S in solutions.items()
    }


def correlation(W: np.ndarray, S: np.ndarray) -> float:
    """<W, S> / (||W||_F ||S||_F) (TF-as-SVM's correlation coefficient)."""
    W, S = np.asarray(W, float), np.asarray(S, float)
    return float(np.sum(W * S) / (np.linalg.norm(W) * np.linalg.norm(S)))


def svm_correlations(W: np.ndarray, solutions: dict) -> dict[str, float]:
    """{norm: correlation of W with that norm's SVM solution} (theirs: fro and nuclear)."""
    return {norm: correlation(W, S) for norm, S in solutions.items()}
