"""The max-norm (entrywise l_inf) attention SVMs without a conic modelling layer: one
primal-dual interior-point method for the box-bounded problems

  min c^T x + (1/2) x^T diag(q) x  s.t.  M x >= h (m rows),  l <= x <= u,

whose Newton steps reduce to m x m systems M diag(theta) M^T (m = n(T - 1) = 80 at fig2's
size, against the 10^4 entries of W). Three problems have this form:

  the SVM        max gamma s.t. M w >= gamma 1, |w| <= 1 (min ||W||_max s.t. M w >= 1 is
                 W = w / gamma); gamma is boxed in [-1, min_k ||M_k||_1 + 1], which holds
                 every feasible gamma strictly inside, so no variable is free
  the canonical  min (1/2)||w||^2 s.t. M w >= 1, |w| <= B (svm.canonical: the optimal
  point          face's least-Frobenius point)
  the face probe min <W*, w> s.t. M w >= 1, |w| <= B (svm.uniqueness)

For the W-SVM a row is rank one, M_k = vec(a_k b_k^T), and b_k is one of the n queries, so
M diag(theta) M^T = sum_a a_k[a] a_l[a] (sum_c theta[a, c] z_i[c] z_j[c]) costs
O(d^2 n^2 + m^2 d) instead of O(m^2 d^2) (RankOneRows). Mehrotra's predictor-corrector
(Wright, Primal-Dual Interior-Point Methods, ch. 10) from the box's centre; it stops at
relative dual and complementarity residuals of TOLERANCE, a hundred times inside
Clarabel's 1e-8, and a primal one of PRIMAL_TOLERANCE, and raises DualSolveError where
ITERATIONS (the probe: PROBE_ITERATIONS) do not get there (or, stalled, answers its best
iterate: STALLED, NEAR), or where its duals prove the constraints infeasible (a Farkas
certificate, before they overflow). The caller (svm.norms, svm.canonical, svm.uniqueness)
certifies the answer with the KKT check (the probe: its point's feasibility) and falls
back to cvxpy, with a logged line, where it fails.

The u-SVM's LP (n rows, d + 1 + n variables) is too small for that method's per-step
overhead: svm.max_simplex solves it by a dense bounded simplex.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from attnbias.svm.dual_solves import DualSolveError, gram_dual
from attnbias.svm.max_simplex import simplex_svm

ITERATIONS = 100
# the face probe's: on DM's data (n = 20, T = 5) it takes 96 steps at d = 400, 107 at 600,
# 144 at 800 (the slab 1e-6 thin: the free entries of W cross the box late, at short
# steps), where cvxpy's fallback took 3 to 5 CPU-minutes (docs/speed.md)
PROBE_ITERATIONS = 300
TOLERANCE = 1e-10
# the primal residual's: in the last steps, with most entries of W free on the optimal face,
# M diag(theta) M^T is huge along them and its solves leave ~1e-9 in M x - s - h; the caller
# rescales onto exact feasibility, and a relative 1e-8 moves the value by as much
PRIMAL_TOLERANCE = 1e-8
# Where the gap has closed but the primal residual then grows (rounding in the last steps'
# normal equations: DM seed 4 of the geometry build, 4e-10 to 7e-5 over 8 steps) the method
# stops once it is STALLED times its best, and answers with its best iterate where that is
# within NEAR times the tolerances (the W-SVM's and canonical point's KKT check, the probe's
# feasibility check decide whether it is used)
STALLED = 1e3
NEAR = 100.0
# the fraction of the way to the boundary a step may go (Mehrotra's 0.995 or more)
STEP_TO_BOUNDARY = 0.995
# iterative refinement steps on each normal-equations solve, at most (one was not enough
# on DM seed 4 of the geometry build: the primal residual stalled at 1e-4)
REFINEMENTS = 2


class DenseRows:
    """M given as an (m, N) array."""

    def __init__(self, M: np.ndarray):
        self.M = np.asarray(M, float)
        self.size = self.M.shape[1]

    def apply(self, x):
        return self.M @ x

    def adjoint(self, y):
        return self.M.T @ y

    def weighted_gram(self, theta):
        return (self.M * theta) @ self.M.T

    def row_l1(self):
        return np.abs(self.M).sum(axis=1)


class RankOneRows:
    """M_k = vec(a_k b_k^T) (C order) with the b_k among a few distinct rows (the queries)."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a = np.asarray(a, float)
        self.Q, self.sample = np.unique(np.asarray(b, float), axis=0, return_inverse=True)
        self.sample = self.sample.ravel()
        d = self.a.shape[1]
        self.d, self.size = d, d * self.Q.shape[1]
        n = self.Q.shape[0]
        # products z_i[c] z_j[c] of every pair of queries: (n^2, d)
        self.pairs = (self.Q[:, None, :] * self.Q[None, :, :]).reshape(-1, self.Q.shape[1])
        self.groups = [np.flatnonzero(self.sample == i) for i in range(n)]  # rows of query i

    def apply(self, x):
        Y = x.reshape(self.d, -1) @ self.Q.T  # (d, n): W z_i
        return np.einsum("ka,ak->k", self.a, Y[:, self.sample])

    def adjoint(self, y):
        return (self.a * y[:, None]).T.dot(self.Q[self.sample]).ravel()

    def weighted_gram(self, theta):
        n = self.Q.shape[0]
        # T[i, j, a] = sum_c theta[a, c] z_i[c] z_j[c]; then, for the rows l of query j,
        # K[k, l] = sum_a a_k[a] T[i_k, j, a] a_l[a]
        T = (self.pairs @ theta.reshape(self.d, -1).T).reshape(n, n, self.d)
        K = np.empty((len(self.a), len(self.a)))
        for j, rows in enumerate(self.groups):
            K[:, rows] = (T[self.sample, j] * self.a) @ self.a[rows].T
        return K

    def row_l1(self):
        return np.abs(self.a).sum(axis=1) * np.abs(self.Q[self.sample]).sum(axis=1)


class _WithColumn:
    """[M | column]: one more variable (the SVM's gamma)."""

    def __init__(self, base, column: np.ndarray):
        self.base, self.column = base, column
        self.size = base.size + 1

    def apply(self, x):
        return self.base.apply(x[:-1]) + self.column * x[-1]

    def adjoint(self, y):
        return np.append(self.base.adjoint(y), self.column @ y)

    def weighted_gram(self, theta):
        return self.base.weighted_gram(theta[:-1]) + theta[-1] * np.outer(self.column, self.column)


class _Scaled:
    """factor * M: the canonical point's and the probe's box |v| <= B solved as |v / B| <= 1,
    the start's scale (at fig2's and DM's size: the canonical point in 24 steps instead of
    51 to 72, the same point to 2e-9; the probe, whose feasible set is a slab 1e-6 thin, in
    50 to 90 where it did not converge in 100)."""

    def __init__(self, base, factor: float):
        self.base, self.factor, self.size = base, factor, base.size

    def apply(self, x):
        return self.factor * self.base.apply(x)

    def adjoint(self, y):
        return self.factor * self.base.adjoint(y)

    def weighted_gram(self, theta):
        return self.factor**2 * self.base.weighted_gram(theta)

    def row_l1(self):
        return self.factor * self.base.row_l1()


@dataclass(frozen=True)
class BoxSolution:
    x: np.ndarray  # the primal point
    dual: np.ndarray  # (m,) the multipliers of M x >= h
    iterations: int


def _largest_step(v, dv):
    """The largest t <= 1 with v + t dv >= 0 (v > 0): 1 / max(-dv / v), one pass."""
    fastest = float(np.min(dv / v))
    return 1.0 if fastest >= -1.0 else -1.0 / fastest


@dataclass
class _Point:
    """An iterate: x with its distances to the bounds (xl = x - lower, xu = upper - x, kept
    as variables of their own: recomputed near a bound they would lose their digits and
    reach 0 in the last steps), the rows' slacks s and the duals y, zl, zu."""

    x: np.ndarray
    xl: np.ndarray
    xu: np.ndarray
    s: np.ndarray
    y: np.ndarray
    zl: np.ndarray
    zu: np.ndarray

    def moved(self, step, tp: float, td: float) -> _Point:
        dx, ds, dy, dzl, dzu = step
        return _Point(self.x + tp * dx, self.xl + tp * dx, self.xu - tp * dx, self.s + tp * ds,
                      self.y + td * dy, self.zl + td * dzl, self.zu + td * dzu)  # fmt: skip

    def complementarity(self) -> float:
        return float(self.y @ self.s + self.zl @ self.xl + self.zu @ self.xu)


class _NewtonSystem:
    """The Newton equations at one iterate, reduced to the m x m normal equations
    (M diag(theta) M^T + diag(s / y)) dy = rhs, factored once for both of Mehrotra's
    directions."""

    def __init__(self, rows, point: _Point, q, r_p, r_d):
        self.rows, self.p, self.r_p, self.r_d = rows, point, r_p, r_d
        self.theta = 1.0 / (q + point.zl / point.xl + point.zu / point.xu)
        K = rows.weighted_gram(self.theta) + np.diag(point.s / point.y)
        try:
            self.factor = scipy.linalg.cho_factor(K, check_finite=False)
        except np.linalg.LinAlgError:  # lost to rounding near the end: a shift at its level
            shift = np.finfo(float).eps * len(K) * np.max(np.diag(K))
            self.factor = scipy.linalg.cho_factor(K + shift * np.eye(len(K)), check_finite=False)

    def _solve(self, rhs):
        p, rows = self.p, self.rows
        dy = scipy.linalg.cho_solve(self.factor, rhs, check_finite=False)
        for _ in range(REFINEMENTS):  # K is ill-conditioned near the end: refine on the
            # operator itself, so that the primal residual keeps shrinking
            error = rhs - rows.apply(self.theta * rows.adjoint(dy)) - (p.s / p.y) * dy
            correction = scipy.linalg.cho_solve(self.factor, error, check_finite=False)
            dy += correction
            if np.linalg.norm(correction) <= 1e-14 * np.linalg.norm(dy):  # nothing left
                break
        return dy

    def direction(self, r_s, r_l, r_u):
        """(dx, ds, dy, dzl, dzu) with the complementarity targets r_s (y s), r_l (zl xl),
        r_u (zu xu)."""
        p, rows = self.p, self.rows
        rho = -self.r_d + r_l / p.xl - r_u / p.xu
        dy = self._solve(-self.r_p - rows.apply(self.theta * rho) + r_s / p.y)
        dx = self.theta * (rows.adjoint(dy) + rho)
        return dx, (r_s - p.s * dy) / p.y, dy, (r_l - p.zl * dx) / p.xl, (r_u + p.zu * dx) / p.xu

    def steps(self, step, same: bool) -> tuple[float, float]:
        """The largest primal and dual step lengths (at most 1) that keep the iterate inside;
        one for both where `same` (a QP's dual residual couples them)."""
        dx, ds, dy, dzl, dzu = step
        p = self.p
        primal = min(_largest_step(p.s, ds), _largest_step(p.xl, dx), _largest_step(p.xu, -dx))
        dual = min(_largest_step(p.y, dy), _largest_step(p.zl, dzl), _largest_step(p.zu, dzu))
        return (min(primal, dual),) * 2 if same else (primal, dual)


def _start(lower, upper, m: int) -> _Point:
    """The box's centre with unit slacks and duals."""
    x = (lower + upper) / 2.0
    ones = np.ones(len(x))
    return _Point(x, x - lower, upper - x, np.ones(m), np.ones(m), ones, ones.copy())


def _farkas_ratio(p: _Point, adjoint_y, h, lower, upper) -> float:
    """(h^T y + l^T zl - u^T zu) / (||M^T y + zl - zu||_1 max|l, u|) of the iterate's duals:
    every point of the box meeting the rows makes it at most 1 (y, zl, zu >= 0 and
    h^T y + l^T zl - u^T zu <= (M^T y + zl - zu)^T x), so above 1 the duals are a
    certificate that none does; on such problems they grow without bound (and overflow)."""
    value = float(h @ p.y + lower @ p.zl - upper @ p.zu)
    ray = float(np.abs(adjoint_y + p.zl - p.zu).sum())
    extent = float(max(np.max(np.abs(lower)), np.max(np.abs(upper))))
    return value / (ray * extent) if ray > 0.0 else (np.inf if value > 0.0 else 0.0)


def box_ipm(rows, c, h, lower, upper, q=None, iterations=None) -> BoxSolution:
    """min c^T x + (1/2) x^T diag(q) x s.t. rows x >= h, lower <= x <= upper (module doc),
    from the box's centre; DualSolveError where `iterations` (ITERATIONS unless given) do
    not reach TOLERANCE, or where the duals prove that no point meets the constraints
    (_farkas_ratio above 2, the factor a margin for rounding)."""
    q = np.zeros(rows.size) if q is None else q
    iterations = ITERATIONS if iterations is None else iterations
    p = _start(lower, upper, len(h))
    scale_c, scale_h = 1.0 + np.max(np.abs(c)), 1.0 + np.max(np.abs(h))
    count = len(h) + 2 * rows.size  # complementarity pairs
    residuals, best, best_score = (np.inf,) * 3, None, np.inf
    for iteration in range(iterations):
        margins = rows.apply(p.x)
        r_p = margins - p.s - h
        adjoint_y = rows.adjoint(p.y)
        r_d = c + q * p.x - adjoint_y - p.zl + p.zu
        if _farkas_ratio(p, adjoint_y, h, lower, upper) > 2.0:
            raise DualSolveError(f"no point meets the constraints: the duals are a Farkas "
                                 f"certificate at step {iteration}")  # fmt: skip
        gap = p.complementarity()
        residuals = (
            np.max(np.abs(r_p)) / (scale_h + np.max(np.abs(margins))),
            np.max(np.abs(r_d)) / scale_c,
            gap / (1.0 + abs(c @ p.x + 0.5 * (q * p.x) @ p.x)),
        )
        if not np.all(np.isfinite(residuals)):
            break
        score = max(residuals[0] / PRIMAL_TOLERANCE, max(residuals[1:]) / TOLERANCE)
        if score < best_score:
            best, best_score = BoxSolution(p.x, p.y, iteration), score
        if score < 1.0:
            return best
        if residuals[2] < TOLERANCE and score > STALLED * best_score:
            break  # the gap has closed and the primal residual grows: rounding, not progress
        try:
            system = _NewtonSystem(rows, p, q, r_p, r_d)
        except np.linalg.LinAlgError:
            raise DualSolveError(
                f"the normal equations lost definiteness at step {iteration}"
            ) from None
        # Mehrotra: the affine direction, its reach sets the centring, then the corrector
        same = bool(np.any(q))
        affine = system.direction(-p.y * p.s, -p.zl * p.xl, -p.zu * p.xu)
        sigma = (p.moved(affine, *system.steps(affine, same)).complementarity() / gap) ** 3
        target = sigma * gap / count
        dx, ds, dy, dzl, dzu = affine
        step = system.direction(
            target - p.y * p.s - dy * ds,
            target - p.zl * p.xl - dzl * dx,
            target - p.zu * p.xu + dzu * dx,
        )
        tp, td = system.steps(step, same)
        p = p.moved(step, min(1.0, STEP_TO_BOUNDARY * tp), min(1.0, STEP_TO_BOUNDARY * td))
    if best_score <= NEAR:  # the caller's certificate decides (module doc)
        return best
    raise DualSolveError(
        f"the interior-point method did not converge in {iterations} steps (relative primal, "
        f"dual, gap residuals {residuals[0]:.1e}, {residuals[1]:.1e}, {residuals[2]:.1e}; "
        f"allowed {PRIMAL_TOLERANCE:g}, {TOLERANCE:g}, {TOLERANCE:g})"
    )


def svm(rows) -> tuple[np.ndarray, np.ndarray]:
    """min ||v||_max s.t. rows v >= 1 as max gamma s.t. rows w >= gamma, |w| <= 1:
    (v = w / gamma, the multipliers). DualSolveError where gamma is not positive (the
    caller decides feasibility first: svm.dual_solves.gram_dual)."""
    m, N = len(rows.row_l1()), rows.size
    top = float(rows.row_l1().min()) + 1.0  # above any feasible gamma (|w| <= 1)
    augmented = _WithColumn(rows, -np.ones(m))
    c = np.zeros(N + 1)
    c[-1] = -1.0
    lower = np.append(-np.ones(N), -1.0)
    upper = np.append(np.ones(N), top)
    found = box_ipm(augmented, c, np.zeros(m), lower, upper)
    gamma = found.x[-1]
    if not gamma > TOLERANCE * top:  # 0 up to the method's accuracy: no v meets the rows
        raise DualSolveError(f"the max-norm LP's margin gamma is {gamma:.3g}, not positive")
    return found.x[:-1] / gamma, found.dual


def w_svm(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The max-norm W-SVM of the rows a_k b_k^T (svm.max_margin.w_svm_constraints): (W
    flattened in C order, the multipliers)."""
    return svm(RankOneRows(a, b))


def u_svm(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The max-norm u-SVM of the rows z_k: (u, the multipliers), by simplex_svm. Its margin
    gamma > 0 proves the rows feasible; where it is not, the Gram dual decides
    (InfeasibleConstraints where no u meets them, else DualSolveError)."""
    z = np.asarray(z, float)
    w, gamma, dual = simplex_svm(z)
    if not gamma > TOLERANCE * (np.abs(z).sum(axis=1).min() + 1.0):
        gram_dual(z @ z.T)
        raise DualSolveError(f"the max-norm LP's margin gamma is {gamma:.3g}, not positive")
    return w / gamma, dual


def least_norm_point(rows, bound: float) -> np.ndarray:
    """argmin ||v||_2 s.t. rows v >= 1, |v| <= bound (svm.canonical's point), solved in
    v / bound (_Scaled)."""
    N, m = rows.size, len(rows.row_l1())
    unit = np.ones(N)
    found = box_ipm(_Scaled(rows, bound), np.zeros(N), np.ones(m), -unit, unit, q=bound**2 * unit)
    return bound * found.x


def least_aligned_point(rows, target: np.ndarray, bound: float) -> np.ndarray:
    """argmin <target, v> s.t. rows v >= 1, |v| <= bound (svm.uniqueness's probe), solved in
    v / bound (_Scaled)."""
    N, m = rows.size, len(rows.row_l1())
    unit = np.ones(N)
    c = bound * np.ravel(target).astype(float)
    found = box_ipm(_Scaled(rows, bound), c, np.ones(m), -unit, unit, iterations=PROBE_ITERATIONS)
    return bound * found.x


def face_cosine(rows, W_star: np.ndarray, bound: float) -> float:
    """cos(W', W*) of the W' least aligned with W* among the SVM's points with max norm at
    most `bound` (svm.uniqueness's probe); DualSolveError where the interior-point method
    does not converge or its point leaves the constraints by more than its primal
    tolerance."""
    found = least_aligned_point(rows, W_star, bound)
    margins = rows.apply(found)
    low, high = float(margins.min()), float(np.max(np.abs(found)))
    # the method's own primal test (box_ipm's residuals); x moves with the distances to the
    # bounds, which stay positive, but may pass the bound itself by its rounding
    if low < 1.0 - PRIMAL_TOLERANCE * (2.0 + np.max(np.abs(margins))) or high > bound * (
        1.0 + 1e-12
    ):
        raise DualSolveError(f"the probe's point has smallest margin {low:.10g} and max "
                             f"norm {high:.10g} against the bound {bound:.10g}")  # fmt: skip
    target = np.ravel(W_star)
    return float(found @ target / (np.linalg.norm(found) * np.linalg.norm(target)))
