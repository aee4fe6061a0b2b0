"""Max-margin problems: W-SVM and u-SVM.

W-SVM: W_mm = argmin ||W||_F  s.t.  (x_{i,opt_i} - x_{i,t})^T W z_i >= 1 for all i, t != opt_i,
z_i the query of sample i: x_{i,1}, or the data's Z (cross-attention; attnbias.model.queries).
Each constraint is <W, a_k b_k^T> >= 1 with a_k = x_opt - x_t and b_k = z_i: a hard-margin
SVM through the origin in d^2 dimensions with m = n(T-1) constraints, whose Gram matrix is
K_kl = (a_k . a_l)(b_k . b_l).

u-SVM: u_mm = argmin ||u||  s.t.  y_i u^T x_{i,opt_i} >= 1.

Our solver works in the m-dimensional Gram space only. It is Lawson & Hanson's least
distance programming (Solving Least Squares Problems, ch. 23) written with the Gram matrix:
min ||w|| s.t. Z w >= 1 is solved by the non-negative least squares problem
min_{l >= 0} ||E l - f||^2 with E = [Z^T; 1^T], f = e_last; only E^T E = K + 1 1^T and
E^T f = 1 enter, so we factor K + 1 1^T (which always has 1 in its range, unlike K) and
call scipy's NNLS. Then w = Z^T l / (1 - 1^T l), and 1^T l = 1 means infeasible.
cvxpy solves the primal as the reference that the tests compare against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnbias.model.queries import queries_of, query_rows


class InfeasibleSVMError(ValueError):
    """The max-margin problem has no solution (e.g. d too small for n and T)."""


@dataclass(frozen=True)
class SVMSolution:
    solution: np.ndarray  # W_mm (d, d) or u_mm (d,)
    dual: np.ndarray  # (m,) dual variables, one per constraint
    margins: np.ndarray  # (m,) constraint values at the solution (>= 1)
    n_support: int  # constraints with a non-zero dual variable
    kkt_residual: float  # max of primal violation and complementary slackness

    @property
    def W(self) -> np.ndarray:
        return self.solution

    @property
    def u(self) -> np.ndarray:
        return self.solution


def w_svm_constraints(
    X: np.ndarray, opt: np.ndarray, queries: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Rows a_k = x_{i,opt_i} - x_{i,t} and b_k = z_i, for every i and t != opt_i; the
    queries z_i (n, d) are x_{i,1} where `queries` is None (model.queries)."""
    n, T, _ = X.shape
    rows = np.arange(n)
    keep = np.arange(T)[None, :] != opt[:, None]  # (n, T)
    a = (X[rows, opt][:, None, :] - X)[keep]  # (m, d)
    b = np.broadcast_to(query_rows(X, queries)[:, None, :], X.shape)[keep]  # (m, d)
    return a, b


def least_distance_dual(K: np.ndarray, *, cholesky: bool = False) -> np.ndarray:
    """Dual variables of min ||w|| s.t. <w, z_k> >= 1, from the Gram matrix K of the z_k.

    Returns None when the problem is infeasible. `cholesky`: factor and polish by Cholesky
    where that is safe (a sixth of the factor's cost at m = 20, the same duals to 1e-14):
    the l2 u-SVM's solve (svm.norms), certified by its KKT check. Off: eigh and lstsq, with
    which every stored W_mm and u_mm and every barrier method's start (svm.spectral_nuclear)
    was computed, bit for bit (a spectral W-SVM started 1e-15 away ends 3e-7 away).
    """
    m = K.shape[0]
    # Scale K to unit largest diagonal: the slack 1 - 1^T l equals 1 / (1 + ||w||^2), so an
    # unscaled problem with a long w would lose its solution to rounding.
    scale = float(np.max(np.diag(K)))
    if not scale > 0:
        return None
    K = K / scale
    R, c = _least_distance_factor(K + 1.0, cholesky)
    from scipy.optimize import nnls  # here: importing scipy.optimize takes ~0.5 s, and a
    # data job imports this module but solves no SVM (except fig8's bad direction)

    lam, _ = nnls(R, c, maxiter=50 * m)
    slack = 1.0 - lam.sum()
    if slack <= 1e-12:
        return None
    dual = _polish(K, lam / slack, cholesky)
    return dual / scale


# H's reciprocal condition number above which its Cholesky factor stands in for the
# eigendecomposition: far above where that drops an eigenvalue (m eps 10, ~1e-13), so both
# pose the same NNLS problem (the polish then gives the duals from the support alone)
CHOLESKY_RCOND = 1e-8


def _least_distance_factor(H: np.ndarray, cholesky: bool) -> tuple[np.ndarray, np.ndarray]:
    """(R, c) with R^T R = H on its range and R^T c = 1: the NNLS problem min ||R l - c||
    of min l^T H l / 2 - 1^T l. With `cholesky`, Cholesky's where H is well conditioned;
    else H's eigenvectors of the eigenvalues above rounding."""
    from scipy.linalg.lapack import dpocon, dpotrf, dtrtrs

    m = H.shape[0]
    if cholesky:
        R, info = dpotrf(H)  # upper: R^T R = H
        if info == 0 and dpocon(R, float(np.abs(H).sum(axis=0).max()))[0] > CHOLESKY_RCOND:
            return R, dtrtrs(R, np.ones(m), trans=1)[0]
    evals, evecs = np.linalg.eigh(H)
    keep = evals > max(evals[-1], 1.0) * m * np.finfo(float).eps * 10
    sqrt_ev = np.sqrt(evals[keep])
    R = sqrt_ev[:, None] * evecs[:, keep].T  # R^T R = H on its range
    return R, (evecs[:, keep].T @ np.ones(m)) / sqrt_ev  # R^T c = 1


def _gram_kkt_residual(K: np.ndarray, dual: np.ndarray) -> float:
    margins = K @ dual
    slackness = np.max(np.abs(dual * (margins - 1.0))) / max(dual.max(), 1e-300)
    return max(0.0, 1.0 - float(margins.min()), float(slackness))


def _polish(K: np.ndarray, dual: np.ndarray, cholesky: bool = False) -> np.ndarray:
    """Refine the NNLS dual on its support, where every margin is exactly 1.

    The least-distance form loses accuracy as ||w|| grows (its slack is 1 / (1 + ||w||^2));
    the support it finds is right, and K_SS l_S = 1 then gives the duals to full precision:
    with `cholesky`, by Cholesky where K_SS is positive definite, else (or where that answer
    is not kept) by least squares. The refined duals are kept only if they are positive and
    satisfy KKT better.
    """
    support = dual > 0
    if not support.any():
        return dual
    K_SS, ones = K[np.ix_(support, support)], np.ones(int(support.sum()))
    for solve in (_cholesky_solve, _least_squares_solve)[0 if cholesky else 1 :]:
        found = solve(K_SS, ones)
        if found is None or not np.all(found > 0):
            continue
        refined = np.zeros_like(dual)
        refined[support] = found
        if _gram_kkt_residual(K, refined) < _gram_kkt_residual(K, dual):
            return refined
    return dual


def _cholesky_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """A x = b for a positive definite A; None where A is not (numerically)."""
    from scipy.linalg.lapack import dposv

    x, info = dposv(A, b)[1:]
    return x if info == 0 else None


def _least_squares_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.lstsq(A, b, rcond=None)[0]


def _solution_report(solution, dual, margins, scale) -> SVMSolution:
    primal_violation = max(0.0, 1.0 - float(margins.min()))
    complementarity = float(np.max(np.abs(dual * (margins - 1.0)))) / max(scale, 1e-300)
    support = int(np.count_nonzero(dual > 1e-9 * max(dual.max(), 1e-300)))
    return SVMSolution(solution, dual, margins, support, max(primal_violation, complementarity))


def infeasible_error(
    kind: str, name: str, shape: tuple, norm: str | None = None
) -> InfeasibleSVMError:
    """The error of an infeasible W-SVM or u-SVM (whatever its norm: the constraints are the
    same), naming the dataset and its sizes."""
    n, T, d = shape
    kind = kind if norm is None else f"{kind} in the {norm} norm"
    return InfeasibleSVMError(
        f"{kind} for {name} is infeasible (n={n}, T={T}, d={d}, {n * (T - 1)} constraints): "
        "no W separates the optimal tokens; increase d or lower n or T"
        if kind.startswith("W-SVM")
        else f"{kind} for {name} is infeasible (n={n}, d={d}): the optimal tokens are not "
        "linearly separable by label; increase d or lower n"
    )


def solve_w_svm(
    X: np.ndarray, opt: np.ndarray, *, name: str = "dataset", queries: np.ndarray | None = None
) -> SVMSolution:
    """W_mm by the Gram-space solver (queries: w_svm_constraints'). Raises
    InfeasibleSVMError naming `name` and the sizes."""
    a, b = w_svm_constraints(X, opt, queries)
    K = (a @ a.T) * (b @ b.T)
    dual = least_distance_dual(K)
    if dual is None:
        raise infeasible_error("W-SVM", name, X.shape)
    W = (a * dual[:, None]).T @ b
    # the margins of the W we return, not K @ dual: they differ where W_mm is long
    margins = ((a @ W) * b).sum(axis=1)
    return _solution_report(W, dual, margins, dual.max())


def u_svm_constraints(X: np.ndarray, y: np.ndarray, opt: np.ndarray) -> np.ndarray:
    """Rows z_i = y_i x_{i,opt_i}."""
    return y[:, None] * X[np.arange(len(y)), opt]


def solve_u_svm(
    X: np.ndarray, y: np.ndarray, opt: np.ndarray, *, name: str = "dataset"
) -> SVMSolution:
    """u_mm by the Gram-space solver."""
    z = u_svm_constraints(X, y, opt)
    dual = least_distance_dual(z @ z.T)
    if dual is None:
        raise infeasible_error("u-SVM", name, X.shape)
    u = z.T @ dual
    return _solution_report(u, dual, z @ u, dual.max())


def solve_w_svm_cvxpy(
    X: np.ndarray, opt: np.ndarray, queries: np.ndarray | None = None, **solver_options
) -> np.ndarray:
    """Reference: the primal W-SVM through cvxpy (vectorised constraints)."""
    import cvxpy as cp

    a, b = w_svm_constraints(X, opt, queries)
    W = cp.Variable((X.shape[2], X.shape[2]))
    margins = cp.sum(cp.multiply(a @ W, b), axis=1)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(W)), [margins >= 1])
    problem.solve(**solver_options)
    if problem.status != cp.OPTIMAL:
        raise InfeasibleSVMError(f"cvxpy W-SVM ended with status {problem.status}")
    return W.value


def solve_u_svm_cvxpy(X: np.ndarray, y: np.ndarray, opt: np.ndarray, **solver_options):
    """Reference: the primal u-SVM through cvxpy."""
    import cvxpy as cp

    z = u_svm_constraints(X, y, opt)
    u = cp.Variable(X.shape[2])
    problem = cp.Problem(cp.Minimize(cp.sum_squares(u)), [z @ u >= 1])
    problem.solve(**solver_options)
    if problem.status != cp.OPTIMAL:
        raise InfeasibleSVMError(f"cvxpy u-SVM ended with status {problem.status}")
    return u.value


def solve_for_dataset(data: dict, train_u: bool, name: str) -> dict[str, SVMSolution]:
    """W_mm for a dataset of the data contract (with its queries Z where it has them), and
    u_mm when the decoder is trained."""
    solutions = {"W_mm": solve_w_svm(data["X"], data["opt"], name=name, queries=queries_of(data))}
    if train_u:
        solutions["u_mm"] = solve_u_svm(data["X"], data["y"], data["opt"], name=name)
    return solutions


def describe(solutions: dict[str, SVMSolution]) -> list[str]:
    return [
        f"{key}: norm {np.linalg.norm(s.solution):.6g}, {s.n_support} support vectors "
        f"of {len(s.dual)} constraints, KKT residual {s.kkt_residual:.2e}"
        for key, s in solutions.items()
    ]


def to_arrays(solutions: dict[str, SVMSolution]) -> dict[str, np.ndarray]:
    """The svm file contract: W_mm [, u_mm], with support counts and KKT residuals."""
    arrays = {}
    for key, s in solutions.items():
        arrays[key] = s.solution
        arrays[f"{key}_n_support"] = np.array(s.n_support)
        arrays[f"{key}_kkt_residual"] = np.array(s.kkt_residual)
    return arrays
