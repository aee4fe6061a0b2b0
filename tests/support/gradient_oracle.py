"""The risk's gradients in extended precision (mpmath), by the textbook formula.

Shared by the gradient tests (tests/model/test_gradients.py,
tests/optim/test_rules.py). It uses none of
the package's stable forms: the attention is a plain softmax, and d f / d W = X^T (diag(a) -
a a^T) X u x_1^T, which cancels about (logit gap) / ln 10 digits once the attention has
saturated. `digits_for(gap)` carries 50 digits beyond that cancellation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np


def digits_for(gap: float) -> int:
    """Working digits that leave 50 after the textbook formula's cancellation at `gap`."""
    return 50 + int(gap / math.log(10)) + 10


@dataclass
class OracleGradient:
    """grad_W L and grad_u L as unit directions and log-norms (their sizes may lie far below
    the smallest float), with grad_W L = (1/n) sum_i v_i x_i1^T kept as left = [v_i / n]
    over its norm: G / ||G|| = left @ Q."""

    dir_W: np.ndarray  # (d, d)
    log_norm_W: float
    left: np.ndarray  # (d, n)
    dir_u: np.ndarray  # (d,)
    log_norm_u: float


def gradients(X, y, u, W, loss: str, dps: int) -> OracleGradient:
    """The oracle at (W, u) on one dataset X (n, T, d), y (n,), both losses."""
    with mpmath.workdps(dps):
        n, T, d = X.shape
        mpf = mpmath.mpf
        Xm = [[[mpf(float(X[i, t, k])) for k in range(d)] for t in range(T)] for i in range(n)]
        Wm = [[mpf(float(W[r, c])) for c in range(d)] for r in range(d)]
        um = [mpf(float(v)) for v in u]
        vs, gu = [], [mpf(0)] * d
        for i in range(n):
            q = [mpmath.fsum(Wm[r][c] * Xm[i][0][c] for c in range(d)) for r in range(d)]
            logits = [mpmath.fsum(Xm[i][t][k] * q[k] for k in range(d)) for t in range(T)]
            top = max(logits)
            ex = [mpmath.exp(v - top) for v in logits]
            total = mpmath.fsum(ex)
            a = [v / total for v in ex]
            xbar = [mpmath.fsum(a[t] * Xm[i][t][k] for t in range(T)) for k in range(d)]
            z = float(y[i]) * mpmath.fsum(um[k] * xbar[k] for k in range(d))
            slope = -mpmath.exp(-z) if loss == "exponential" else -1 / (1 + mpmath.exp(z))
            ux = [mpmath.fsum(um[k] * Xm[i][t][k] for k in range(d)) for t in range(T)]
            uxbar = mpmath.fsum(a[t] * ux[t] for t in range(T))
            c = slope * float(y[i]) / n
            v = [c * mpmath.fsum(a[t] * (ux[t] - uxbar) * Xm[i][t][k] for t in range(T))
                 for k in range(d)]  # fmt: skip
            vs.append(v)
            for k in range(d):
                gu[k] += c * xbar[k]
        G = [[mpmath.fsum(vs[i][r] * Xm[i][0][col] for i in range(n)) for col in range(d)]
             for r in range(d)]  # fmt: skip
        norm_W = mpmath.sqrt(mpmath.fsum(G[r][c] ** 2 for r in range(d) for c in range(d)))
        norm_u = mpmath.sqrt(mpmath.fsum(g**2 for g in gu))
        return OracleGradient(
            dir_W=np.array([[float(G[r][c] / norm_W) for c in range(d)] for r in range(d)]),
            log_norm_W=float(mpmath.log(norm_W)),
            left=np.array([[float(vs[i][r] / norm_W) for i in range(n)] for r in range(d)]),
            dir_u=np.array([float(g / norm_u) for g in gu]),
            log_norm_u=float(mpmath.log(norm_u)),
        )
