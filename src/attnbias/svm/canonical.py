"""One point of an attention SVM's optimal face, whichever point the solver returned: its
least-Frobenius-norm point. The max, spectral and nuclear norms are not strictly convex,
so min ||W||_N under the margin constraints may have a face of solutions, and which one an
interior-point solver returns depends on its path (the constraints' order, the machine's
rounding): a measure that reads the solution (an alignment, the norms' centroid) would
then be a function of the solver, not of the problem. The canonical point

  W^c = argmin ||W||_F^2  s.t.  (x_{i,opt_i} - x_{i,t})^T W x_{i,1} >= 1,
                                ||W||_N <= (1 + SLACK) ||W*||_N,

is unique (a strictly convex objective over a convex set), and since the set holds the
whole face (||W*||_N, a feasible point's value, is at or above the optimum), it is the
face's least-norm point up to the slack: the measured distance of W^c between slacks
(the max norm's near-optimal set is long and thin: 2.5e-2 between 1e-8 and 1e-6 on DM),
and between two orders of the constraints and coordinates (5e-9 to 1.6e-5), is in
docs/geometry.md ("Which solution"). W^c is itself an optimum to the slack, so its KKT
conditions hold with the solver's duals (checked: svm.norms.optimality_defect).
For the spectral norm the point lies in the spans of the constraints' rows (projecting onto
them keeps every constraint and lowers both norms), where it is solved; for the nuclear
norm, on the top singular subspace of the duals' G (NUCLEAR_TOP_GAP); where the active
constraints fix the point on that subspace (G's top singular value simple, as on DM's data,
or a few directions pinned by enough active constraints) the optimum is unique and the
solver's W is kept (an SDP's near-optimal set is O(sqrt(slack)) wide, not O(slack): solving
the least-norm point there moves it off the active constraints by ~1e-5).
"""

from __future__ import annotations

import logging

import numpy as np

from attnbias.svm import max_norm, spectral_face
from attnbias.svm.dual_solves import DualSolveError
from attnbias.svm.norm_values import norm_value, parse_norm
from attnbias.svm.norms import (
    UNITARILY_INVARIANT,
    NormSVMSolution,
    cvxpy_norm,
    dense_margins,
    kkt_violations,
    optimality_defect,
    query_margins,
    w_rows,
)
from attnbias.svm.spectral_nuclear import orthonormal_basis
from attnbias.svm.token_sets import subject_of
from attnbias.svm.uniqueness import needs_probe

LOG = logging.getLogger(__name__)

# The relative slack on the optimal value. ||W*||_N is a feasible point's value, so at or
# above the optimum: the set holds the whole face at any slack >= 0, and the slack keeps it
# from being a hair's breadth wide where the solver's value is off by its own accuracy
# (a relative gap of 1e-8, Clarabel's default): 1e-7, ten times that, and ten times below
# the KKT check's 1e-6 (svm.norms.OPTIMALITY_TOLERANCE), which W^c, at (1 + slack) times
# the optimum, must pass with the solver's duals
SLACK = 1e-7
# The nuclear norm's optima all lie on G's top singular subspace, G = sum_k lambda_k A_k
# (W = U1 P V1^T, P >= 0: the subdifferential), where the problem is an r x r SDP instead
# of cvxpy's nuclear-norm cone (145 s at DM's size, this ~1 s). The top singular values
# read 1 to the duals' accuracy (1e-6); the next one on DM's data lies far below (seed 1:
# 0.28). A subspace taken too large still gives an optimum to
# the slack; one too small gives none, and the KKT check refuses it.
NUCLEAR_TOP_GAP = 1e-4
# the norms whose point is solved without cvxpy where `fast`: by which module
FAST = {"max": "svm.max_norm", "spectral": "svm.spectral_face"}


def _nuclear_face(a, b, dual, top_gap: float = NUCLEAR_TOP_GAP):
    """(Pa, Pb), orthonormal (d, r): where every nuclear-norm optimum lies, W = Pa P Pb^T
    with P >= 0 (module doc), from the singular vectors of G = sum_k lambda_k a_k b_k^T at
    its top singular value (1, the duals being scaled so), those within `top_gap`."""
    Ua, Ub = orthonormal_basis(a), orthonormal_basis(b)
    G = (a @ Ua * dual[:, None]).T @ (b @ Ub)
    U, S, Vt = np.linalg.svd(G, full_matrices=False)
    top = S >= S[0] * (1.0 - top_gap)
    return Ua @ U[:, top], Ub @ Vt[top].T


def _nuclear_face_is_a_point(a, b, dual, active: float = 1e-6) -> bool:
    """Whether the nuclear norm's optimal face is one point: every optimum is Pa P Pb^T with
    P >= 0 symmetric (r x r) and meets each constraint of a positive dual (above `active`
    times the largest) with equality, so where those equalities fix P's r (r + 1) / 2
    entries (the linear map has full rank) the optimum is unique (r = 1: one entry)."""
    Pa, Pb = _nuclear_face(a, b, dual)
    on = dual > active * dual.max()
    ca, cb = a[on] @ Pa, b[on] @ Pb
    r = Pa.shape[1]
    rows, cols = np.triu_indices(r)
    # <ca cb^T, P> over P's upper triangle (an off-diagonal entry counts twice)
    entries = ca[:, rows] * cb[:, cols] + np.where(rows != cols, ca[:, cols] * cb[:, rows], 0.0)
    return bool(np.linalg.matrix_rank(entries) == len(rows))


def _nuclear_least_norm_point(a, b, dual, slack: float, solver: str) -> np.ndarray | None:
    """The nuclear norm's point on the face's subspace W = Pa P Pb^T, P >= 0 (r x r), where
    ||W||_* = tr P: first the subspace's optimal value (the subspace, read from the duals,
    is accurate to the duals' 1e-6, so the solver's own value may lie just below what it
    holds), then the least ||P||_F within the slack of it."""
    import cvxpy as cp

    Pa, Pb = _nuclear_face(a, b, dual)
    P = cp.Variable((Pa.shape[1], Pa.shape[1]), symmetric=True)
    coefficients = np.einsum("kj,ki->kji", b @ Pb, a @ Pa).reshape(len(a), -1)
    feasible = [P >> 0, coefficients @ cp.vec(P, order="F") >= 1]
    best = cp.Problem(cp.Minimize(cp.trace(P)), feasible)
    best.solve(solver=getattr(cp, solver))
    if best.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return None
    problem = cp.Problem(
        cp.Minimize(cp.sum_squares(P)), [*feasible, cp.trace(P) <= (1.0 + slack) * best.value]
    )
    problem.solve(solver=getattr(cp, solver))
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or P.value is None:
        return None
    return Pa @ np.asarray(P.value) @ Pb.T


def least_norm_point(
    X, opt, norm: str, value: float, slack: float = SLACK, solver: str = "CLARABEL",
    dual: np.ndarray | None = None, queries=None, fast: bool = True, start=None,
) -> np.ndarray | None:  # fmt: skip
    """argmin ||W||_F s.t. the margins >= 1 and ||W||_N <= (1 + slack) value (module
    doc); None where the solver fails. The nuclear norm's needs the solver's duals.
    queries: the data's Z (cross-attention), None for the first tokens. Where `fast`, the
    max norm's by svm.max_norm's interior-point method, the spectral norm's by
    svm.spectral_face's barrier method from `start` (the SVM's solution, of value `value`;
    without it, cvxpy) (DualSolveError where they fail); else by cvxpy (the reference and
    the fallback)."""
    import cvxpy as cp

    parsed = parse_norm(norm)
    a, b = w_rows(X, opt, queries)
    bound = (1.0 + slack) * value
    if parsed.kind == "max" and fast:
        d = a.shape[1]
        return max_norm.least_norm_point(max_norm.RankOneRows(a, b), bound).reshape(d, d)
    if parsed.kind == "spectral" and fast and start is not None:
        return spectral_face.least_norm_point(a, b, bound, start)
    if parsed.kind == "nuclear":
        return _nuclear_least_norm_point(a, b, dual, slack, solver)
    if parsed.kind in UNITARILY_INVARIANT:
        Ua, Ub = orthonormal_basis(a), orthonormal_basis(b)
        coefficients = np.einsum("kj,ki->kji", b @ Ub, a @ Ua).reshape(len(a), -1)
        V = cp.Variable((Ua.shape[1], Ub.shape[1]))
        margins, definitions = dense_margins(coefficients)(V)
    else:
        V = cp.Variable((a.shape[1], a.shape[1]))
        margins, definitions = query_margins(X, opt, a, queries)(V)
    constraints = [margins >= 1, cvxpy_norm(V, parsed) <= bound, *definitions]
    problem = cp.Problem(cp.Minimize(cp.sum_squares(V)), constraints)
    problem.solve(solver=getattr(cp, solver))
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or V.value is None:
        return None
    found = np.asarray(V.value)
    return Ua @ found @ Ub.T if parsed.kind in UNITARILY_INVARIANT else found


def canonical(
    solution: NormSVMSolution, X, opt, norm: str, *, name: str, queries=None
) -> NormSVMSolution:
    """The solver's W-SVM `solution` replaced by its face's least-Frobenius-norm point
    (module doc), rescaled onto exact feasibility (smallest margin 1) and checked against
    KKT with the solver's duals; unchanged for a strictly convex norm. RuntimeError naming
    `name` where the point is not found or fails its check. queries: least_norm_point's."""
    if not needs_probe(norm):  # strictly convex: the optimum is unique
        return solution
    parsed = parse_norm(norm)
    a, b = w_rows(X, opt, queries)
    if parsed.kind == "nuclear" and _nuclear_face_is_a_point(a, b, solution.dual):
        return solution  # a single optimum: the solver's is it
    if parsed.kind in FAST:  # cvxpy below where it fails (a logged line)
        try:
            W = least_norm_point(X, opt, norm, solution.value, queries=queries, fast=True,
                                 start=solution.solution)  # fmt: skip
            return checked_point(W, solution, X, opt, parsed, name, queries)
        except (DualSolveError, RuntimeError) as why:
            subject = subject_of("W-SVM", parsed, name, opt)
            LOG.warning("%s: %s's least-norm point failed (%s); solved by cvxpy",
                        subject, FAST[parsed.kind], why)  # fmt: skip
    W = least_norm_point(
        X, opt, norm, solution.value, dual=solution.dual, queries=queries, fast=False
    )
    if W is None:
        raise RuntimeError(f"W-SVM for {name}: the {parsed.name} face's least-norm point failed")
    return checked_point(W, solution, X, opt, parsed, name, queries)


def checked_point(W, solution, X, opt, parsed, name, queries) -> NormSVMSolution:
    """W rescaled onto exact feasibility, checked against KKT with the SVM's duals."""
    a, b = w_rows(X, opt, queries)
    margins = ((a @ W) * b).sum(axis=1)
    low = float(margins.min())
    W, margins = W / low, margins / low
    residual = max(kkt_violations(W, solution.dual, X, opt, parsed.name, queries=queries).values())
    result = NormSVMSolution(W, solution.dual, margins, norm_value(W, parsed), residual)
    defect = optimality_defect(result, X, opt, parsed.name, queries=queries)
    if defect:
        raise RuntimeError(f"W-SVM for {name}: its face's least-norm point: {defect}")
    return result
