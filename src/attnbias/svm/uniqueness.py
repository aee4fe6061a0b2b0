"""Is an attention SVM's optimum unique? The max, spectral and nuclear norms are not
strictly convex, so min ||W||_N under the margin constraints may have a face of optimal
solutions, and the alignment of a run with "the" solution then measures which element the
solver returned (docs/geometry.md), were it not replaced by its face's canonical point
(svm.canonical, which the stored W* is). The probe: the element of the optimal face least
aligned with the stored W*,

  min <W, W*>  s.t.  (x_{i,opt_i} - x_{i,t})^T W z_i >= 1   (z_i: the query, x_{i,1} or Z's),
                     ||W||_N <= (1 + FACE_TOLERANCE) ||W*||_N,

and its cosine with W*: 1 (up to the tolerance) where the optimum is unique, far below 1
where it is not (training.geometry_names.is_unique reads it). The Frobenius and l_p (p > 1)
norms are strictly convex: their optimum is unique and nothing is solved. The nuclear
norm's probe is a semidefinite program of the size the solver avoids (svm.norms: 66 s at
fig2's size): it is not probed (NaN). Where `fast`: the max norm's probe by svm.max_norm;
the spectral norm's face, where svm.spectral_probe finds it one point (G of full rank on
the constraints' spans, as on three of Example 1's five seeds) from the duals the SVM's
solve found (passed in, and certified here), reads 1 without a solve,
else cvxpy (svm.spectral_probe's solve on the exact face is measured, not used:
docs/speed.md, "The spectral face probe"). A fast route that fails falls back to cvxpy with
a logged line naming the dataset, token set, norm and why.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from attnbias.svm import max_norm, spectral_probe
from attnbias.svm.dual_solves import DualSolveError
from attnbias.svm.norm_values import norm_value, parse_norm
from attnbias.svm.norms import (
    UNITARILY_INVARIANT,
    NormSVMSolution,
    cvxpy_norm,
    dense_margins,
    optimality_defect,
    query_margins,
    w_rows,
)
from attnbias.svm.spectral_nuclear import orthonormal_basis
from attnbias.svm.token_sets import subject_of

# a W within this relative distance of the optimal value counts as optimal: the accuracy
# the solutions are certified to (svm.norms.OPTIMALITY_TOLERANCE). Measured on DM (seed 0):
# the max norm's probe reads 0.983, 0.998 and 0.9994 at 1e-4, 1e-6 and 1e-7 (a long thin
# near-optimal set around one optimum), the spectral norm's 0.548 at all three (a face)
FACE_TOLERANCE = 1e-6
STRICTLY_CONVEX = ("fro", "lp")
# the norms whose probe has a fast route where `fast`: by which module
FAST = {"max": "svm.max_norm", "spectral": "svm.spectral_probe"}

LOG = logging.getLogger(__name__)


def certified_dual(dual, W_star, X, opt, norm, queries=None, name: str = "dataset"):
    """`dual` where (W*, dual) passes the SVM's KKT check (norms.optimality_defect, as every
    reader of stored SVMs), else None with a logged line saying why; None where none given."""
    if dual is None:
        return None
    norm = parse_norm(norm)
    defect = optimality_defect(NormSVMSolution(W_star, dual, None, None, None), X, opt, norm,
                               queries=queries)  # fmt: skip
    if defect is None:
        return dual
    LOG.warning("%s: the duals passed to the face probe are refused (%s); not used",
                subject_of("W-SVM", norm, name, opt), defect)  # fmt: skip
    return None


def needs_probe(norm: str) -> bool:
    """Whether the norm's optimum may not be unique (not strictly convex): only then does
    face_cosine solve anything."""
    return parse_norm(norm).kind not in STRICTLY_CONVEX


def face_cosine(
    X,
    opt,
    norm: str,
    W_star: np.ndarray,
    queries=None,
    fast=True,
    name: str = "dataset",
    dual: np.ndarray | None = None,
) -> float:
    """cos(W', W*) of the optimal W' least aligned with W* (module doc); 1.0 for a strictly
    convex norm or a face that is one point, NaN where not probed (nuclear) or where the
    solver fails. queries: the data's Z (cross-attention), None for the first tokens. The
    max norm's probe by svm.max_norm's interior-point method and the spectral norm's point
    test by svm.spectral_probe where `fast` (cvxpy where they fail, with a logged line
    naming `name`, the dataset and seed or run), else by cvxpy (the reference). dual: the
    SVM's duals where its solve found them (NormSVMSolution.dual), which the spectral point
    test then reads instead of solving the SVM again, once they pass the KKT check with W*
    (certified_dual: refused with a logged line otherwise, and not used)."""
    import cvxpy as cp

    parsed = parse_norm(norm)
    if not needs_probe(norm):
        return 1.0
    if parsed.kind == "nuclear":
        return math.nan
    bound = (1.0 + FACE_TOLERANCE) * norm_value(W_star, parsed)
    a, b = w_rows(X, opt, queries)
    if parsed.kind in FAST and fast:
        try:
            if parsed.kind == "max":
                return max_norm.face_cosine(max_norm.RankOneRows(a, b), W_star, bound)
            dual = certified_dual(dual, W_star, X, opt, parsed, queries, name)
            if spectral_probe.face_is_a_point(a, b, dual):
                return 1.0
        except DualSolveError as why:
            LOG.warning("%s: the %s-norm face probe by %s failed (%s); solved by cvxpy",
                        subject_of("W-SVM", parsed, name, opt), parsed.name, FAST[parsed.kind],
                        why)  # fmt: skip
    if parsed.kind in UNITARILY_INVARIANT:  # as svm.norms: an optimum lies in the spans
        Ua, Ub = orthonormal_basis(a), orthonormal_basis(b)
        coefficients = np.einsum("kj,ki->kji", b @ Ub, a @ Ua).reshape(len(a), -1)
        V = cp.Variable((Ua.shape[1], Ub.shape[1]))
        margins, definitions = dense_margins(coefficients)(V)
        target = Ua.T @ W_star @ Ub
    else:
        V = cp.Variable(W_star.shape)
        margins, definitions = query_margins(X, opt, a, queries)(V)
        target = W_star
    constraints = [margins >= 1, cvxpy_norm(V, parsed) <= bound, *definitions]
    problem = cp.Problem(cp.Minimize(cp.sum(cp.multiply(target, V))), constraints)
    problem.solve(solver=cp.CLARABEL)
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or V.value is None:
        return math.nan
    found = np.asarray(V.value)
    return float(np.vdot(found, target) / (np.linalg.norm(found) * np.linalg.norm(target)))
