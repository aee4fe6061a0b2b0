"""The attention SVMs under other norms: which max-margin an optimizer's geometry picks.

W-SVM in a norm: argmin ||W|| s.t. <A_k, W> >= 1, A_k = a_k b_k^T with a_k = x_{i,opt_i} - x_{i,t}
and b_k = x_{i,1} (max_margin.w_svm_constraints), or the data's query z_i where `queries`
are given (cross-attention: attnbias.model.queries); u-SVM: argmin ||u|| s.t. <z_k, u> >= 1,
z_i = y_i x_{i,opt_i}. The constraints are linear whatever the norm, so only the objective
changes. The Frobenius and l_p SVMs (and every norm's u-SVM) are solved in m-dimensional
duals (svm.dual_solves, svm.max_norm: m = n(T - 1) unknowns, not d^2), the spectral and
nuclear W-SVMs by barrier methods (svm.spectral_nuclear); cvxpy and Clarabel are the
tests' reference, and the fallback, with a logged line saying why, where a fast solve fails
or its answer fails the KKT check. The norms: "fro", "max" (entrywise l_inf), "spectral",
"nuclear" and "l<p>" (entrywise l_p, p in optim.lp_norm's range); on a vector spectral and
nuclear are l2.

Optimality (KKT of min ||W|| s.t. <A_k, W> >= 1): W feasible, duals lambda >= 0,
lambda_k (<A_k, W> - 1) = 0, and G = sum_k lambda_k A_k a subgradient of ||.|| at W, i.e.
||G||_* = 1 and <G, W> = ||W||. Then lambda is feasible for the dual problem
max sum(lambda) s.t. ||sum_k lambda_k A_k||_* <= 1, lambda >= 0, whose value sum(lambda)
= <G, W> = ||W|| equals the primal's: the pair certifies each other. optimality_defect
checks these on any (W, lambda), e.g. as read back from a file.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from attnbias.model.queries import query_rows
from attnbias.svm import dual_solves, max_norm, spectral_nuclear
from attnbias.svm.max_margin import u_svm_constraints, w_svm_constraints
from attnbias.svm.norm_values import Norm, dual_norm_value, norm_value, parse_norm
from attnbias.svm.token_sets import infeasible, refuse_zero_rows, subject_of

# the norms that depend on the singular values only (unitarily invariant)
UNITARILY_INVARIANT = ("fro", "spectral", "nuclear")

# Every KKT condition is measured relative to its natural scale (margins against 1, the
# dual norm against 1, slackness and <G, W> against ||W|| = sum(lambda)), and each must hold
# to 1e-6: the interior-point solver stops at relative gaps of 1e-8 (Clarabel's defaults),
# and we rescale W and lambda onto exact feasibility (below), so its answers sit 100x
# inside; a solution off by a relative 1e-6 in norm is no longer the optimum for the
# alignment measures' 3 significant digits either. The same bound as W_mm's (svm.check).
OPTIMALITY_TOLERANCE = 1e-6

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class NormSVMSolution:
    solution: np.ndarray  # W* (d, d) or u* (d,)
    dual: np.ndarray  # (m,) lambda, one per constraint (of min ||W||, not ||W||^2 / 2)
    margins: np.ndarray  # (m,) constraint values at the solution (>= 1)
    value: float  # ||W*|| in its norm
    optimality_residual: float  # the largest relative KKT violation (kkt_violations)


# ---- the constraints as one linear map: <A_k, W> = (M @ vec(W))_k, G = M^T lambda ------


def w_rows(X: np.ndarray, opt: np.ndarray, queries=None) -> tuple[np.ndarray, np.ndarray]:
    """The W-SVM's constraints <a_k b_k^T, W> >= 1 as the rows (a (m, d), b (m, d)) of
    max_margin.w_svm_constraints, from any array-likes (every solver and check reads these)."""
    X, opt = np.asarray(X, dtype=float), np.asarray(opt).astype(np.int64)
    return w_svm_constraints(X, opt, None if queries is None else np.asarray(queries, float))


def constraint_rows(X, opt, *, y=None, queries=None, vector: bool):
    """The constraints' rows: z (n, d) of the u-SVM where `vector`, else (a, b) of the
    W-SVM. A solve computes them once and hands them to every check below."""
    return u_rows(X, y, opt) if vector else w_rows(X, opt, queries)


def _constraint_values(solution: np.ndarray, rows) -> np.ndarray:
    if solution.ndim == 2:
        a, b = rows
        return ((a @ solution) * b).sum(axis=1)
    return rows @ solution


def _dual_combination(dual: np.ndarray, rows, shape) -> np.ndarray:
    """G = sum_k lambda_k A_k."""
    if len(shape) == 2:
        a, b = rows
        return (a * dual[:, None]).T @ b
    return rows.T @ dual


def u_rows(X, y, opt) -> np.ndarray:
    """The u-SVM's constraint rows y_i x_{i, opt_i} (n, d): one per sample."""
    if y is None:
        raise ValueError("the u-SVM's constraints need the labels y")
    X, y, opt = np.asarray(X, float), np.asarray(y, float), np.asarray(opt).astype(np.int64)
    return u_svm_constraints(X, y, opt)


def kkt_violations(solution, dual, X, opt, norm, y=None, queries=None, *, rows=None):
    """Each KKT condition's violation, relative to its scale (0 where it holds exactly).
    `rows`: constraint_rows of (X, opt, y, queries), where the caller has them."""
    norm = parse_norm(norm)
    solution, dual = np.asarray(solution, float), np.asarray(dual, float)
    if rows is None:
        rows = constraint_rows(X, opt, y=y, queries=queries, vector=solution.ndim != 2)
    margins = _constraint_values(solution, rows)
    value = norm_value(solution, norm)
    total = float(dual.sum())
    if dual.shape != margins.shape or not value > 0 or not total > 0:
        return {"shape": math.inf}
    G = _dual_combination(dual, rows, solution.shape)
    return {
        "primal": max(0.0, 1.0 - float(margins.min())),
        "dual_sign": max(0.0, -float(dual.min())) / total,
        "slackness": float(np.max(np.abs(dual * (margins - 1.0)))) / total,
        "dual_norm": abs(dual_norm_value(G, norm) - 1.0),
        "alignment": abs(float(np.vdot(G, solution)) - value) / value,
    }


def optimality_defect(solution, X, opt, norm, *, y=None, queries=None, rows=None) -> str | None:
    """Why `solution` (a NormSVMSolution, or any object with .solution and .dual) is not the
    SVM's optimum in `norm` for (X, opt) [and y, for a u (d,)] [and the queries, for a
    cross-attention W], in words; None where every
    KKT condition holds within OPTIMALITY_TOLERANCE. Recomputes everything from the
    solution and its duals (and the constraints' `rows`, where given: constraint_rows of
    the same data); the stored residual is not trusted."""
    W, dual = np.asarray(solution.solution), np.asarray(solution.dual)
    return _checked(W, dual, X, opt, parse_norm(norm), y, queries, rows)[0]


def _checked(W, dual, X, opt, norm: Norm, y, queries, rows) -> tuple[str | None, dict]:
    """(optimality_defect's answer, the KKT violations it read: none where sizes are wrong)."""
    if rows is None:
        rows = constraint_rows(X, opt, y=y, queries=queries, vector=W.ndim != 2)
    d, m = np.shape(X)[2], len(rows[0] if W.ndim == 2 else rows)
    what = "W" if W.ndim == 2 else "u"
    if W.shape not in ((d, d), (d,)) or not np.all(np.isfinite(W)):
        size = f"(shape {W.shape}) is not finite of size d={d}"
        return f"the {norm.name} {what}-SVM solution {size}", {}
    if dual.shape != (m,) or not np.all(np.isfinite(dual)):
        return f"its duals (shape {dual.shape}) are not {m} finite numbers, one per constraint", {}
    violations = kkt_violations(W, dual, X, opt, norm, y, queries, rows=rows)
    worst = max(violations, key=violations.get)
    if violations[worst] <= OPTIMALITY_TOLERANCE:
        return None, violations
    listed = ", ".join(f"{k} {v:.2g}" for k, v in violations.items())
    return (
        f"the {norm.name} {what}-SVM solution is not optimal: its KKT conditions fail by "
        f"{violations[worst]:.3g} ({worst}; allowed {OPTIMALITY_TOLERANCE:g}; {listed})"
    ), violations


# ---- the solves --------------------------------------------------------------------------


def cvxpy_norm(variable, norm: Norm):
    """||variable|| in `norm` as a cvxpy expression (the reference solves here, and the
    cvxpy problems of svm.canonical and svm.uniqueness bound it)."""
    import cvxpy as cp

    if norm.kind == "max":
        return cp.max(cp.abs(variable))
    if norm.kind == "lp":
        return cp.pnorm(cp.vec(variable, order="F"), norm.p)
    if variable.ndim == 1 or norm.kind == "fro":
        return cp.norm(cp.vec(variable, order="F"), 2)
    return cp.sigma_max(variable) if norm.kind == "spectral" else cp.normNuc(variable)


def _solve(shape: tuple, norm: Norm, margins_of):
    """min ||V|| over V of `shape` s.t. margins_of(V) >= 1: (V, lambda, status).
    `margins_of(V)` returns the constraint values and any constraints that define them."""
    import cvxpy as cp

    V = cp.Variable(shape)
    margins, definitions = margins_of(V)
    constraint = margins >= 1
    problem = cp.Problem(cp.Minimize(cvxpy_norm(V, norm)), [constraint, *definitions])
    # Clarabel (interior point) for every norm, the max norm's linear program too: HiGHS's
    # simplex takes minutes on it at fig2's size
    problem.solve(solver=cp.CLARABEL)
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return None, None, problem.status
    return np.asarray(V.value), np.asarray(constraint.dual_value).ravel(), problem.status


def _solve_nuclear_by_its_dual(coefficients: np.ndarray, shape: tuple):
    """The nuclear-norm SVM through its dual, max sum(lambda) s.t. ||G(lambda)||_2 <= 1,
    lambda >= 0, as the LMI [[I, G], [G^T, I]] >= 0 in the m duals; C is -2 times the
    LMI's multiplier's off-diagonal block. The primal (cvxpy's normNuc, with two
    symmetric matrix variables) takes 66 s at fig2's size, this 3 s. (C, lambda, status);
    an unbounded dual is an infeasible primal."""
    import cvxpy as cp

    r, c = shape
    lam = cp.Variable(len(coefficients), nonneg=True)
    G = cp.reshape(coefficients.T @ lam, shape, order="F")
    lmi = cp.bmat([[np.eye(r), G], [G.T, np.eye(c)]]) >> 0
    problem = cp.Problem(cp.Maximize(cp.sum(lam)), [lmi])
    problem.solve(solver=cp.CLARABEL)
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        status = {cp.UNBOUNDED: cp.INFEASIBLE, cp.UNBOUNDED_INACCURATE: cp.INFEASIBLE}
        return None, None, status.get(problem.status, problem.status)
    return -2.0 * np.asarray(lmi.dual_value)[:r, r:], np.asarray(lam.value), problem.status


def dense_margins(coefficients: np.ndarray):
    """The cvxpy margins of V on the constraints' spans (V = U_a^T W U_b): V -> (coefficients
    @ vec_F(V), no defining constraints); query_margins' form on the full W."""
    import cvxpy as cp

    return lambda V: (coefficients @ cp.vec(V, order="F"), [])


def query_margins(X, opt, a: np.ndarray, queries=None):
    """margins a_k^T Y[:, i_k] with Y = V Q, Q (d, n) the queries z_i: the constraints
    touch W through its n products with the queries, a sparse system (d^2 n + m d entries)
    where writing each margin out in W's d^2 entries would couple all of them (m d^2 dense
    entries: 12 s instead of 1.4 s for the max norm at fig2's size)."""
    import cvxpy as cp

    X, opt = np.asarray(X, float), np.asarray(opt).astype(np.int64)
    Q = query_rows(X, None if queries is None else np.asarray(queries, float))
    n, T, d = X.shape
    sample = np.nonzero(np.arange(T)[None, :] != opt[:, None])[0]  # i_k, w_svm_constraints' order

    def margins_of(V):
        Y = cp.Variable((d, n))
        return cp.sum(cp.multiply(a.T, Y[:, sample]), axis=0), [Y == V @ Q.T]

    return margins_of


class CertificateError(RuntimeError):
    """A solver's answer that fails the KKT check (optimality_defect)."""


def _finish(solution, dual, rows, norm, X, opt, y, subject, queries=None) -> NormSVMSolution:
    """Rescale onto exact feasibility (smallest margin 1) and the duals onto the dual
    norm's unit sphere, check KKT, refuse what fails (CertificateError naming `subject`).
    `rows`: constraint_rows of the data, computed once by the solve."""
    margins = _constraint_values(solution, rows)
    low = float(margins.min())
    if not (np.isfinite(low) and low > 0 and np.all(np.isfinite(dual))):
        raise CertificateError(f"{subject}: the solver's answer has smallest margin {low:.3g}")
    solution, margins = solution / low, margins / low
    dual = np.maximum(dual, 0.0)
    G = _dual_combination(dual, rows, solution.shape)
    scale = dual_norm_value(G, norm)
    if not scale > 0:
        raise CertificateError(f"{subject}: the solver's duals are all zero")
    dual = dual / scale
    defect, violations = _checked(solution, dual, X, opt, norm, y, queries, rows)
    if defect:  # optimality_defect's; its KKT conditions give the residual too
        raise CertificateError(f"{subject}: the solver's answer fails its check: {defect}")
    value = norm_value(solution, norm)
    return NormSVMSolution(solution, dual, margins, value, max(violations.values()))


def _rows_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(m, d^2): row k is vec(a_k b_k^T) in C order, so that M @ W.ravel() = the margins."""
    return np.einsum("ki,kj->kij", a, b).reshape(len(a), -1)


def _solve_fast(M: np.ndarray, K: np.ndarray, norm: Norm, cholesky: bool = False):
    """(v, lambda) by svm.dual_solves for min ||v|| s.t. M v >= 1 (M: (m, D)) in the l_p
    norm, else in l2 (fro, and spectral and nuclear on a vector; `cholesky`: its factor)."""
    if norm.kind == "lp":
        start = dual_solves.frobenius(M, K, cholesky=cholesky)[1]  # the l2 duals: a start
        return dual_solves.lp_norm(M, norm.p, start)
    return dual_solves.frobenius(M, K, cholesky=cholesky)


def _certified(fast, reference, finish, subject: str) -> NormSVMSolution:
    """The fast solver's answer where it passes the KKT check; else, with a logged line
    saying why, the cvxpy reference's solution, which must pass it too."""
    try:
        return finish(*fast())
    except dual_solves.InfeasibleConstraints:
        raise
    except (dual_solves.DualSolveError, CertificateError, np.linalg.LinAlgError) as why:
        LOG.warning("%s: the dual solver failed (%s); solved by the cvxpy reference", subject, why)
    return reference()


def solve_w_svm_norm(X, opt, norm, *, name: str = "dataset", queries=None) -> NormSVMSolution:
    """argmin ||W|| s.t. (x_{i,opt_i} - x_{i,t})^T W z_i >= 1 (z_i = x_{i,1} where
    `queries` is None), checked against KKT. InfeasibleSVMError naming `name`, the norm, the
    token set and the sizes where no W meets the constraints or a constraint row is zero;
    RuntimeError where no solver's answer passes the KKT check. fro, l_p: svm.dual_solves;
    spectral, nuclear: svm.spectral_nuclear (cvxpy: a logged fallback); max: cvxpy."""
    norm = parse_norm(norm)
    a, b = w_rows(X, opt, queries)
    subject = subject_of("W-SVM", norm, name, opt)
    refuse_zero_rows([a, b], "W-SVM", norm, name, opt, np.shape(X))
    d = a.shape[1]

    def finish(W, dual):
        return _finish(np.reshape(W, (d, d)), dual, (a, b), norm, X, opt, None, subject, queries)

    def reference():
        # feasibility does not depend on the norm: the Gram dual decides it
        dual_solves.gram_dual((a @ a.T) * (b @ b.T))
        return solve_svm_norm_reference(X, opt, norm, name=name, queries=queries)

    try:
        if norm.kind == "max":  # svm.max_norm's interior-point method (infeasible: it fails)
            return _certified(lambda: max_norm.w_svm(a, b), reference, finish, subject)
        if norm.kind in spectral_nuclear.KINDS:  # gram_dual inside decides feasibility
            return _certified(lambda: spectral_nuclear.solve(a, b, norm.kind), reference,
                              finish, subject)  # fmt: skip
        M = _rows_matrix(a, b)
        return _certified(lambda: _solve_fast(M, (a @ a.T) * (b @ b.T), norm), reference,
                          finish, subject)  # fmt: skip
    except dual_solves.InfeasibleConstraints:
        raise infeasible("W-SVM", norm, name, opt, np.shape(X)) from None


def _solve_w_by_cvxpy(X, opt, a, b, norm: Norm, subject: str, queries=None):
    """The reference: (W, lambda) from cvxpy and Clarabel, as solved before svm.dual_solves."""
    d = a.shape[1]
    if norm.kind in UNITARILY_INVARIANT:
        # W = U_a C U_b^T with orthonormal bases of span(a_k) and span(b_k): projecting any
        # feasible W onto these spans (P_a W P_b) keeps every constraint (a_k = P_a a_k,
        # b_k = P_b b_k) and does not raise a unitarily invariant norm (its singular values
        # only shrink), so an optimum lies there and ||W|| = ||C||. At fig2's size C is at most
        # 80 x 20 instead of 100 x 100: a small SDP for the spectral and nuclear norms.
        Ua, Ub = spectral_nuclear.orthonormal_basis(a), spectral_nuclear.orthonormal_basis(b)
        ca, cb = a @ Ua, b @ Ub
        coefficients = np.einsum("kj,ki->kji", cb, ca).reshape(len(a), -1)  # vec_F(c_a c_b^T)
        shape = (Ua.shape[1], Ub.shape[1])
        if norm.kind == "nuclear":
            C, dual, status = _solve_nuclear_by_its_dual(coefficients, shape)
        else:
            C, dual, status = _solve(shape, norm, dense_margins(coefficients))
        W = None if C is None else Ua @ C @ Ub.T
    else:
        W, dual, status = _solve((d, d), norm, query_margins(X, opt, a, queries))
    if W is None:
        raise _failure(subject, status)
    return W, dual


def solve_u_svm_norm(X, y, opt, norm, *, name: str = "dataset") -> NormSVMSolution:
    """argmin ||u|| s.t. y_i u^T x_{i,opt_i} >= 1 (spectral, nuclear: l2 on a vector), by
    svm.dual_solves (cvxpy only as a logged fallback); errors as solve_w_svm_norm's."""
    norm = parse_norm(norm)
    z = u_rows(X, y, opt)
    subject = subject_of("u-SVM", norm, name, opt)
    refuse_zero_rows([z], "u-SVM", norm, name, opt, np.shape(X))

    def finish(u, dual):
        return _finish(u, dual, z, norm, X, opt, y, subject)

    def reference():
        return solve_svm_norm_reference(X, opt, norm, y=y, name=name)

    try:
        if norm.kind == "max":  # its simplex proves feasibility, else the Gram dual decides
            return _certified(lambda: max_norm.u_svm(z), reference, finish, subject)
        return _certified(lambda: _solve_fast(z, z @ z.T, norm, cholesky=True), reference,
                          finish, subject)  # fmt: skip
    except dual_solves.InfeasibleConstraints:
        raise infeasible("u-SVM", norm, name, opt, np.shape(X)) from None


def solve_svm_norm_reference(
    X, opt, norm, *, y=None, name: str = "dataset", queries=None
) -> NormSVMSolution:
    """The cvxpy + Clarabel reference, certified alike: the W-SVM, or with labels `y` the
    u-SVM, as solved before svm.dual_solves (the tests' and the benchmark's comparison)."""
    norm = parse_norm(norm)
    if y is None:
        a, b = w_rows(X, opt, queries)
        subject = subject_of("W-SVM", norm, name, opt)
        W, dual = _solve_w_by_cvxpy(X, opt, a, b, norm, subject, queries)
        return _finish(W, dual, (a, b), norm, X, opt, None, subject, queries)
    z = u_rows(X, y, opt)
    subject = subject_of("u-SVM", norm, name, opt)
    u, dual, status = _solve((z.shape[1],), norm, dense_margins(z))
    if u is None:
        raise _failure(subject, status)
    return _finish(u, dual, z, norm, X, opt, y, subject)


def _failure(subject: str, status) -> Exception:
    if status in ("infeasible", "infeasible_inaccurate"):
        return dual_solves.InfeasibleConstraints(f"{subject}: cvxpy ended {status}")
    return RuntimeError(f"{subject}: the cvxpy reference ended {status}")


__all__ = [
    "CertificateError",
    "NormSVMSolution",
    "optimality_defect",
    "solve_svm_norm_reference",
    "solve_u_svm_norm",
    "solve_w_svm_norm",
]
