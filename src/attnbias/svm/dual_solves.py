"""The norm SVMs min ||V|| s.t. M vec(V) >= 1 solved without a conic solver, from the m
constraint rows alone (m = n(T - 1) = 80 at fig2's size, against d^2 = 10^4 entries):

  fro   the Gram-space least-distance dual of max_margin (NNLS on an m x m matrix)
  lp    (p > 1, q = p / (p - 1)) the smooth dual min_{lambda >= 0} f(lambda) =
        (1/q) ||M^T lambda||_q^q - sum(lambda), whose minimiser gives the primal
        w = grad (1/q)||.||_q^q (M^T lambda) = |G|^(q-1) sign(G): stationarity is
        M w >= 1 with lambda_k (M w - 1)_k = 0, i.e. w is feasible and certified by lambda
        (<G, w> = ||G||_q^q = ||w||_p^p = sum(lambda)). L-BFGS-B finds the active set,
        Newton's method on it (m x m systems) polishes to rounding

Each returns (solution, lambda) or raises DualSolveError saying why; the caller
(svm.norms) certifies the answer with the KKT check, which alone decides whether it is
used. The max norm's LP (max gamma s.t. M w >= gamma, |w_j| <= 1) is svm.max_norm's (an
interior-point method on m x m systems; HiGHS's dual simplex took as long as Clarabel on
it at fig2's size: 0.7 s, 505 iterations on 10^4 bounded columns), and the spectral and
nuclear W-SVMs' duals are not smooth at optima where the active singular values coalesce
(their faces): svm.spectral_nuclear solves those by barrier methods, inside, where all is
smooth.
"""

from __future__ import annotations

import numpy as np

from attnbias.svm.max_margin import least_distance_dual

# L-BFGS-B's budget and stopping point before the Newton polish; the polish's budget
LBFGS_ITERATIONS = 5000
NEWTON_ITERATIONS = 50
ACTIVE_SET_ROUNDS = 10  # times m: the active set's changes
# the margins of the active set at 1 to this (the KKT check's tolerance is 1e-6)
NEWTON_TOLERANCE = 1e-7


class DualSolveError(RuntimeError):
    """A dual solve that did not reach an answer (the reason in words)."""


class InfeasibleConstraints(DualSolveError):
    """No V meets the constraints (whatever the norm)."""


def gram_dual(K: np.ndarray, *, cholesky: bool = False) -> np.ndarray:
    """The Frobenius (l2) SVM's duals from the constraints' Gram matrix K; whether any point
    meets the constraints does not depend on the norm, so this decides feasibility for all
    (InfeasibleConstraints where none does). `cholesky`: least_distance_dual's."""
    dual = least_distance_dual(K, cholesky=cholesky)
    if dual is None:
        raise InfeasibleConstraints("the constraints' Gram system has no feasible point")
    return dual


def frobenius(M: np.ndarray, K: np.ndarray | None = None, *, cholesky: bool = False):
    """min ||v||_2 s.t. M v >= 1 (M: (m, D)): (v, lambda) by the least-distance dual on the
    Gram matrix K (M M^T unless given: for W's rows it is (a a^T) * (b b^T)); `cholesky`:
    least_distance_dual's."""
    dual = gram_dual(M @ M.T if K is None else K, cholesky=cholesky)
    return M.T @ dual, dual


def _lp_terms(G: np.ndarray, q: float):
    """|G|^(q-1) sign(G) (the primal) and (q-1)|G|^(q-2) (its derivative), the derivative
    taken 0 where G is 0 and q < 2 (infinite there: an entry no constraint touches, e.g. a
    coordinate zero in every token, stays 0)."""
    magnitude = np.abs(G)
    with np.errstate(divide="ignore"):
        slope = (q - 1.0) * magnitude ** (q - 2.0)
    return np.sign(G) * magnitude ** (q - 1.0), np.where(np.isfinite(slope), slope, 0.0)


def lp_norm(M: np.ndarray, p: float, start: np.ndarray | None = None):
    """min ||v||_p s.t. M v >= 1 by its smooth dual (module doc): (v, lambda). `start`: a
    non-negative lambda to begin from (the l2 SVM's unless given). L-BFGS-B, then Newton's
    method on the active set in lambda alone; for p > 2, where that stalls (w(G) is not
    differentiable at G = 0), in the pair (w, lambda)."""
    lam = gram_dual(M @ M.T) if start is None else np.maximum(start, 0.0)
    q = p / (p - 1.0)
    lam = _lbfgs(M, _scaled_start(M, lam, q), q)
    try:
        return _newton_polish(M, lam, q, _newton_dual)
    except DualSolveError:
        if q >= 2.0:
            raise
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging pair is refused below
        return _newton_polish(M, lam, q, _newton_primal_dual)


def _lbfgs(M, lam, q):
    """L-BFGS-B on the smooth dual from lam: a lambda near the optimum."""
    from scipy.optimize import minimize

    def objective(lam):
        G = M.T @ lam
        return float(np.sum(np.abs(G) ** q) / q - lam.sum()), M @ _lp_terms(G, q)[0] - 1.0

    options = {"maxiter": LBFGS_ITERATIONS, "ftol": 1e-15, "gtol": 1e-12}
    bounds = [(0, None)] * len(lam)
    return minimize(objective, lam, jac=True, method="L-BFGS-B", bounds=bounds, options=options).x


def _scaled_start(M, lam, q):
    """lam times the scale t minimising f(t lam) = t^q A / q - t S: t = (S / A)^(1/(q-1))."""
    A = np.sum(np.abs(M.T @ lam) ** q)
    S = lam.sum()
    if not (A > 0 and S > 0):
        return np.ones(len(lam))
    return lam * (S / A) ** (1.0 / (q - 1.0))


def _newton_polish(M, lam, q, newton):
    """An active-set Newton method from L-BFGS-B's lambda: on the active set S, Newton's
    method solves M_S w(M_S^T lambda_S) = 1 (the margins of the support at 1); a multiplier
    that would turn negative leaves S (the step stops at its bound), the most violated
    inactive margin joins it, until lambda >= 0 meets every margin with slackness."""
    active = lam > 1e-9 * lam.max()
    if not active.any():
        raise DualSolveError("L-BFGS-B ended with every multiplier at 0")
    lam = np.where(active, lam, 0.0)
    for _ in range(ACTIVE_SET_ROUNDS * len(lam)):
        if not active.any():
            raise DualSolveError("every multiplier left the active set")
        lam, w, left = newton(M, lam, active, q)
        if left is not None:  # a multiplier reached 0: drop it, solve again
            active[left] = False
            continue
        margins = M @ w
        if np.max(np.abs(margins[active] - 1.0)) > NEWTON_TOLERANCE:
            raise DualSolveError(
                f"Newton's method on {active.sum()} active constraints stalled at a margin "
                f"{np.max(np.abs(margins[active] - 1.0)):.2g} from 1"
            )
        violated = np.where(active, np.inf, margins)
        worst = int(np.argmin(violated))
        if violated[worst] >= 1.0 - NEWTON_TOLERANCE:
            return w, lam
        active[worst] = True
    raise DualSolveError("the active set did not settle")


def _first_to_zero(x: np.ndarray, step: np.ndarray) -> tuple[float, int]:
    """(t, k): the fraction of `step` at which the first multiplier of x reaches 0, and which
    (t = inf, k = -1 where none decreases)."""
    shrinking = np.flatnonzero(step < 0)
    if not len(shrinking):
        return np.inf, -1
    ratios = -x[shrinking] / step[shrinking]
    return float(ratios.min()), int(shrinking[np.argmin(ratios)])


def _scattered(lam: np.ndarray, index: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(lam)
    out[index] = np.maximum(x, 0.0)
    return out


def _newton_primal_dual(M, lam, active, q):
    """Newton's method for the active set's stationarity, M_S w = 1 with
    grad (1/p)||w||_p^p = M_S^T lambda_S, in (w, lambda_S) together: for q < 2 (p > 2)
    w(G) = |G|^(q-1) sign(G) is not differentiable at G = 0, its inverse
    |w|^(p-1) sign(w) is, so the pair converges where lambda alone stalls. A backtracking
    line search on the residual; (lambda, None) at convergence or stall, (lambda, k) where
    the step was cut at constraint k's multiplier reaching 0."""
    rows = M[active]
    index = np.flatnonzero(active)
    p = q / (q - 1.0)
    x = lam[active].copy()
    w = _lp_terms(rows.T @ x, q)[0]

    def residual(w, x):
        return np.sign(w) * np.abs(w) ** (p - 1.0) - rows.T @ x, rows @ w - 1.0

    def size(r):  # the stationarity residual relative to G's size, and the margins'
        scale = max(np.sum((rows.T @ x) ** 2), 1e-300)
        return np.sqrt(np.sum(r[0] ** 2) / scale + np.sum(r[1] ** 2))

    r = residual(w, x)
    for _ in range(NEWTON_ITERATIONS):
        if np.max(np.abs(r[1])) < NEWTON_TOLERANCE / 100 and size(r) < NEWTON_TOLERANCE / 100:
            break
        curvature = (p - 1.0) * np.abs(w) ** (p - 2.0)
        inverse = 1.0 / np.maximum(curvature, 1e-30 * max(curvature.max(), 1e-300))
        dx = np.linalg.lstsq((rows * inverse) @ rows.T, rows @ (inverse * r[0]) - r[1],
                             rcond=None)[0]  # fmt: skip
        dw = inverse * (rows.T @ dx - r[0])
        bound, k = _first_to_zero(x, dx)
        if bound <= 1.0:  # a multiplier would cross 0: stop on it and drop it
            return _scattered(lam, index, x + bound * dx), None, index[k]
        t, now = 1.0, size(r)
        while t > 1e-10:
            trial = residual(w + t * dw, x + t * dx)
            if size(trial) < now:
                break
            t /= 2.0
        else:
            break
        w, x, r = w + t * dw, x + t * dx, trial
    return _scattered(lam, index, x), w, None


def _newton_dual(M, lam, active, q):
    """As _newton_primal_dual, for q >= 2 (p <= 2), where w(G) = |G|^(q-1) sign(G) is
    smooth: Newton's method in lambda_S alone on M_S w(M_S^T lambda_S) = 1."""
    rows = M[active]
    index = np.flatnonzero(active)
    x = lam[active].copy()

    def residual(x):
        return rows @ _lp_terms(rows.T @ x, q)[0] - 1.0

    r = residual(x)
    for _ in range(NEWTON_ITERATIONS):
        if np.max(np.abs(r)) < NEWTON_TOLERANCE / 100:
            break
        weights = _lp_terms(rows.T @ x, q)[1]
        step = np.linalg.lstsq((rows * weights) @ rows.T, -r, rcond=None)[0]
        bound, k = _first_to_zero(x, step)
        if bound <= 1.0:  # a multiplier would cross 0: stop on it and drop it
            return _scattered(lam, index, x + bound * step), None, index[k]
        t, now = 1.0, np.linalg.norm(r)
        while t > 1e-10:
            trial = residual(x + t * step)
            if np.linalg.norm(trial) < now:
                break
            t /= 2.0
        else:
            break
        x, r = x + t * step, trial
    return _scattered(lam, index, x), _lp_terms(rows.T @ x, q)[0], None
