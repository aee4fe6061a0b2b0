"""The norm SVMs min ||V|| s.t. M vec(V) >= 1 solved without a conic solver, from the m
constraint rows alone (m = n(T - 1) = 80 at fig2's size, against d^2 = 10^4 entries):

  fro   the Gram-space least-distance dual of max_margin (NNLS on an m x m matrix)
  lp    (p > 1, q = p / (p - 1)) the smooth dual min_{lambda >= 0} f(lambda) =
        (1/q) ||M^T lambda||_q^q - sum(lambda), whose minimiser gives the primal
        w = grad (1/q)||.||_q^q (M^T lambda) = |G|^(q-1) sign(G): stationarity is
        M w >= 1 with lambda_k (M w - 1)_k = 0, i.e. w is feasible and certified by lambda
        (<G, w> = ||G||_q^q = ||w||_p^p = sum(lambda)). The projected Newton method
        (small problems: the u-SVM) or L-BFGS-B (large ones: the W-SVM, whose m x m
        Hessian costs m^2 d^2) finds the active set, Newton's method on it (m x m
        systems) polishes to rounding

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
# the projected Newton method: where (m^2 D at most this: the u-SVM's 4e4 at fig2's size,
# not its W-SVM's 6.4e7, whose Hessian costs 40 L-BFGS-B steps), its budget and its
# search's sufficient decrease (a fraction of the projected step's first-order one)
NEWTON_SIZE = 10**6
PROJECTED_NEWTON_ITERATIONS = 50
ARMIJO = 1e-4
# the Newton systems' reciprocal condition number above which Cholesky solves them
SPD_RCOND = 1e-10
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
    non-negative lambda to begin from (the l2 SVM's unless given). Where the m x m Hessian
    is cheap (m^2 D at most NEWTON_SIZE: the u-SVM), the projected Newton method finds the
    active set; else, or where that fails, L-BFGS-B. Then Newton's method on the active set
    polishes: in lambda alone, or for p > 2 (where w(G) is not differentiable at G = 0) in
    the pair (w, lambda): after L-BFGS-B only where lambda alone stalls."""
    lam = gram_dual(M @ M.T) if start is None else np.maximum(start, 0.0)
    q = p / (p - 1.0)
    lam = _scaled_start(M, lam, q)
    if M.shape[0] ** 2 * M.shape[1] <= NEWTON_SIZE:
        try:
            return _polished(M, _projected_newton(M, lam, q), q, lambda_alone=q >= 2.0)
        except DualSolveError:
            pass  # L-BFGS-B's route, as for a large problem
    lam = _lbfgs(M, lam, q)
    try:
        return _polished(M, lam, q, lambda_alone=True)
    except DualSolveError:
        if q >= 2.0:
            raise
    return _polished(M, lam, q, lambda_alone=False)


def _polished(M, lam, q, *, lambda_alone: bool):
    """_newton_polish from lam: in lambda alone, else in the pair (w, lambda)."""
    if lambda_alone:
        return _newton_polish(M, lam, q, _newton_dual)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging pair is refused below
        return _newton_polish(M, lam, q, _newton_primal_dual)


def _dual_value(M, lam, q):
    """f(lambda) and G = M^T lambda."""
    G = M.T @ lam
    return float((np.abs(G) ** q).sum() / q - lam.sum()), G


def _projected_newton(M, lam, q):
    """Bertsekas's projected Newton method (SIAM J. Control Optim. 20, 1982) on the smooth
    dual from lam, until the active set settles (a full step that keeps the multipliers at
    0 where they were, none of whose margins is then below 1): the multipliers at 0 with a
    positive gradient held there by a projected gradient step, Newton's step (the Hessian
    M_F diag(w'(G)) M_F^T) on the others, an Armijo search along the projected arc. Near
    the optimum Newton's steps in lambda alone overshoot where an entry of G is near 0
    (q < 2: w' infinite at 0), so the polish takes over once the set is found.
    DualSolveError where the budget or the search ends first."""
    f, G = _dual_value(M, lam, q)
    settled = False
    for _ in range(PROJECTED_NEWTON_ITERATIONS):
        w, slope = _lp_terms(G, q)
        gradient = M @ w - 1.0  # the margins less 1
        if settled and np.all(gradient[lam == 0] >= 0):
            return lam
        gap = float(np.max(np.abs(lam - np.maximum(lam - gradient, 0.0))))
        held = (lam <= min(gap, 1e-3 * lam.max())) & (gradient > 0)
        free = ~held
        step = -gradient  # on the held multipliers: onto 0
        rows = M[free]
        step[free] = -_spd_solve((rows * slope) @ rows.T, gradient[free])
        t = 1.0
        while t > 1e-12:
            trial = np.maximum(lam + t * step, 0.0)
            f_trial, G_trial = _dual_value(M, trial, q)
            if f - f_trial >= ARMIJO * (gradient @ (lam - trial)):
                break
            t /= 2.0
        else:
            raise DualSolveError("the projected Newton method's search found no decrease")
        settled = t == 1.0 and np.array_equal(trial > 0, lam > 0)
        lam, f, G = trial, f_trial, G_trial
    raise DualSolveError("the projected Newton method's active set did not settle")


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


def _spd_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A^-1 b for a symmetric positive semidefinite A: by Cholesky (LAPACK's, without
    numpy's wrappers: these systems are small and solved often) where A is well conditioned
    (reciprocal condition number above SPD_RCOND; its 1-norm bounded by m max(diag A),
    as |A_kl| <= sqrt(A_kk A_ll)), else by least squares as before."""
    from scipy.linalg.lapack import dpocon, dposv

    factor, x, info = dposv(A, b)
    if info == 0 and dpocon(factor, len(A) * float(A.diagonal().max()))[0] > SPD_RCOND:
        return x
    return np.linalg.lstsq(A, b, rcond=None)[0]


def _first_to_zero(x: np.ndarray, step: np.ndarray) -> tuple[float, int]:
    """(t, k): the fraction of `step` at which the first multiplier of x reaches 0, and which
    (t = inf, k = -1 where none decreases)."""
    shrinking = step < 0
    if not shrinking.any():
        return np.inf, -1
    ratios = np.full(len(x), np.inf)
    np.divide(-x, step, out=ratios, where=shrinking)
    k = int(ratios.argmin())
    return float(ratios[k]), k


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

    def residual(w, x):  # and G, whose size scales the stationarity residual
        G = rows.T @ x
        return np.sign(w) * np.abs(w) ** (p - 1.0) - G, rows @ w - 1.0, max(G @ G, 1e-300)

    def size(r, scale):  # the stationarity residual relative to G's size, and the margins'
        return np.sqrt(r[0] @ r[0] / scale + r[1] @ r[1])

    r = residual(w, x)
    for _ in range(NEWTON_ITERATIONS):
        now = size(r, r[2])
        if np.max(np.abs(r[1])) < NEWTON_TOLERANCE / 100 and now < NEWTON_TOLERANCE / 100:
            break
        curvature = (p - 1.0) * np.abs(w) ** (p - 2.0)
        inverse = 1.0 / np.maximum(curvature, 1e-30 * max(curvature.max(), 1e-300))
        dx = _spd_solve((rows * inverse) @ rows.T, rows @ (inverse * r[0]) - r[1])
        dw = inverse * (rows.T @ dx - r[0])
        bound, k = _first_to_zero(x, dx)
        if bound <= 1.0:  # a multiplier would cross 0: stop on it and drop it
            return _scattered(lam, index, x + bound * dx), None, index[k]
        t = 1.0
        while t > 1e-10:
            trial = residual(w + t * dw, x + t * dx)
            if size(trial, r[2]) < now:
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
