"""The spectral norm's optimal face described exactly (svm.uniqueness's face probe). With
the SVM's duals lambda and G = sum_k lambda_k A_k (on the constraints' spans, C = U_a^T W
U_b, r_a x r_b), every optimum W of value v satisfies <G, W> = ||G||_* ||W||_2
(complementary slackness; the nuclear norm is the dual norm), so for G = P diag(s) Q^T of
rank r

  C = v (P Q^T + P_perp B Q_perp^T),  ||B||_2 <= 1         (the face of the ball G exposes)

and, the optimum's margins being 1 wherever lambda_k > 0 and >= 1 elsewhere, the optimal
set is exactly these B with alpha_k^T B beta_k = 1 / v - c_k (k active) and >= (k
inactive), alpha_k = P_perp^T c_a,k, beta_k = Q_perp^T c_b,k, c_k = c_a,k^T P Q^T c_b,k.

face_is_a_point: where r = r_b (G of full rank on the spans) or the equalities fix B, the
optimum is unique, said without a solve (svm.uniqueness then reads cosine 1) from the duals
the SVM's solve found (svm.uniqueness passes them, KKT-certified), or from the SVM solved
again for its duals where none are given.
least_aligned_point: min <C*, C> over the face, the linear objective <D, B> (D = P_perp^T
C* Q_perp) over a spectral ball of (r_a - r) x (r_b - r), an affine subspace and
halfspaces, by the spectral SVM's barrier (svm.spectral_nuclear: the ball's Hessian
inverted in closed form, the halfspaces by Woodbury, the equalities by their Schur
complement) from the SVM's own central point, until the reduced LP's measured duality gap
is GAP times ||D||_*. Measured, and not what svm.uniqueness uses (docs/speed.md, "The
spectral face probe"): on DM that LP is degenerate (points within a relative gap of 3e-7
have cosines 0.81 to 0.92 with W*), and W*, the canonical point at slack 1e-7, lies up to
1.7e-2 off the exact face in G's weak directions, so the slab probe and the exact face
answer different questions; the benchmark (benchmarks/svm_norms.py) prints both.

The description rests on two decisions read from the duals, each with a stated cut and
refused where it is not clear-cut (DualSolveError: the caller falls back to cvxpy with a
logged line): G's rank (singular values above RANK_CUT times the largest) and the active
set (lambda_k above ACTIVE_CUT times the largest), nothing within a factor CLEAR of a cut.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnbias.svm import spectral_nuclear
from attnbias.svm.dual_solves import DualSolveError
from attnbias.svm.spectral_nuclear import (
    SpectralPrimal,
    ball_and_margins_barrier,
    follow_central_path,
)

# measured on the stored SVMs of geometry_dm and geometry_example1 (10 seeds): G's
# singular values over the largest are >= 1.5e-3 or <= 4.4e-7, the duals over the largest
# >= 6.2e-4 or <= 7e-7; the cuts sit between, and a value within CLEAR of a cut is refused
RANK_CUT = 1e-5
ACTIVE_CUT = 1e-5
CLEAR = 10.0
# the reduced LP's relative duality gap (over ||D||_*, the objective's range over the
# ball). Measured on DM (seeds 1 to 5): 1.4e-5 to 1.6e-5 at t = 1e6, 2e-7 to 3e-7 at 1e8;
# from t ~ 1e10 the ball's barrier (1 - ||B||_2 ~ 1e-10) no longer gives a dual estimate
GAP = 1e-6


def _decided(values: np.ndarray, cut: float, what: str) -> np.ndarray:
    """values / max above `cut`; DualSolveError where one lies within CLEAR of the cut."""
    ratio = values / values.max()
    unclear = (ratio > cut / CLEAR) & (ratio < cut * CLEAR)
    if np.any(unclear):
        raise DualSolveError(f"{what} not clear-cut: {ratio[unclear][0]:.2g} of the largest, "
                             f"within {CLEAR:g}x of the cut {cut:g}")  # fmt: skip
    return ratio > cut


class _FaceLP(SpectralPrimal):
    """x = vec B (C order), p x q (p >= q): min <D, B> s.t. ||B||_2 < 1, the inactive
    margins' rows (alpha_k, beta_k) at least `low`, R vec B fixed (R orthonormal rows)."""

    def __init__(self, D, alpha, beta, low, R):
        self.ca, self.cb, self.low, self.R = alpha, beta, low, R
        self.D, self.shape = D, D.shape

    def barrier(self, x, t):
        B = x.reshape(self.shape)
        objective = t * float(np.vdot(self.D, B))
        return ball_and_margins_barrier(objective, B, self.margins(B) - self.low)

    def newton(self, x, t):
        B = x.reshape(self.shape)
        w = 1.0 / (self.margins(B) - self.low)
        U, sigma, Vt = np.linalg.svd(B, full_matrices=True)
        s = 1.0 / ((1.0 - sigma) * (1.0 + sigma))
        gradient = t * self.D + 2.0 * B @ (Vt.T * s) @ Vt - (self.ca * w[:, None]).T @ self.cb
        solve_E = self.margin_solver(U, sigma, s, Vt.T, w)
        step = -solve_E(gradient)
        if len(self.R):  # the equalities: R step = 0 by their Schur complement
            ER = np.stack([solve_E(row.reshape(self.shape)).ravel() for row in self.R])
            nu = np.linalg.solve(self.R @ ER.T, self.R @ step.ravel())
            step = step - (nu @ ER).reshape(self.shape)
        return gradient.ravel(), step.ravel()

    def answer(self, x, t):
        B = x.reshape(self.shape)
        return B, 1.0 / (t * (self.margins(B) - self.low)), t

    def gap(self, B, mu, t) -> float:
        """<D, B> minus the Lagrangian dual mu^T low + nu^T R vec B - ||D - A^T mu - R^T
        nu||_* (a lower bound for any mu >= 0, nu), nu the least-squares fit of the centre's
        ball multiplier Z = 2 B (I - B^T B)^-1 / t, over ||D||_*."""
        if not (np.all(mu >= 0) and np.all(np.isfinite(B))):
            return np.inf
        q = self.shape[1]
        Z = 2.0 * B @ np.linalg.inv(np.eye(q) - B.T @ B) / t
        M = self.D - (self.ca * mu[:, None]).T @ self.cb
        nu = self.R @ (M + Z).ravel()
        M = M - (nu @ self.R).reshape(self.shape)
        nuclear = np.linalg.svd(M, compute_uv=False).sum()
        dual = float(mu @ self.low) + float(nu @ (self.R @ B.ravel())) - nuclear
        scale = np.linalg.svd(self.D, compute_uv=False).sum()
        return (float(np.vdot(self.D, B)) - dual) / max(scale, np.finfo(float).tiny)


@dataclass(frozen=True)
class Face:
    """The exact optimal face on the spans (module doc): C = value (P Q^T + Pp B Qp^T) with
    ||B||_2 <= 1, rows @ vec B = low[active] (their directions R, orthonormal) and the
    inactive margins alpha_k^T B beta_k >= low_k; start: the SVM's central point (C)."""

    problem: SpectralPrimal
    value: float
    P: np.ndarray
    Pp: np.ndarray
    Q: np.ndarray
    Qp: np.ndarray
    active: np.ndarray
    rows: np.ndarray
    R: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    low: np.ndarray
    start: np.ndarray

    def is_a_point(self) -> bool:
        return _one_point(self.Pp, self.Qp, self.R)


def _exposed(problem: SpectralPrimal, lam: np.ndarray):
    """What the SVM's duals `lam` say of its optimal face (module doc): the active set, G's
    singular bases split at its rank (P, Pp, Q, Qp), the margins' rows in B (alpha, beta),
    the active ones as rows of vec B and those rows' directions R; DualSolveError where a
    decision is not clear-cut."""
    ca, cb = problem.ca, problem.cb
    active = _decided(lam, ACTIVE_CUT, "the active set")
    lam = np.where(active, lam, 0.0)  # the inactive duals' rounding would tilt G's vectors
    U, s, Vt = np.linalg.svd((ca * lam[:, None]).T @ cb, full_matrices=True)
    r = int(_decided(s, RANK_CUT, "G's rank").sum())
    P, Pp, Q, Qp = U[:, :r], U[:, r:], Vt[:r].T, Vt[r:].T
    alpha, beta = ca @ Pp, cb @ Qp
    rows = (alpha[active, :, None] * beta[active, None, :]).reshape(int(active.sum()), -1)
    # the equalities' directions: singular values of their rows against the rows' own
    # scale before the reduction (on DM the active rows share b_k, so beta_k is rounding)
    _, sv, Vr = np.linalg.svd(rows, full_matrices=False)
    scale = np.linalg.norm(ca[active], axis=1) * np.linalg.norm(cb[active], axis=1)
    R = Vr[_decided(np.append(sv, scale.max()), RANK_CUT, "the equalities' rank")[:-1]]
    return active, P, Pp, Q, Qp, alpha, beta, rows, R


def _one_point(Pp: np.ndarray, Qp: np.ndarray, R: np.ndarray) -> bool:
    """The face is one point: G of full rank on the spans, or the equalities fix B."""
    return Qp.shape[1] == 0 or len(R) == Pp.shape[1] * Qp.shape[1]


def describe(a: np.ndarray, b: np.ndarray) -> Face:
    """The spectral SVM's optimal face (module doc) from its barrier solution and duals, r_a
    >= r_b; DualSolveError where a decision is not clear-cut."""
    W, lam = spectral_nuclear.solve(a, b, "spectral")
    problem = SpectralPrimal(a, b)
    ca, cb = problem.ca, problem.cb
    start = problem.Ua.T @ W @ problem.Ub  # the SVM's central point: inside the face
    start = start / problem.margins(start).min()
    value = float(np.linalg.norm(start, 2))
    active, P, Pp, Q, Qp, alpha, beta, rows, R = _exposed(problem, lam)
    low = 1.0 / value - ((ca @ P) * (cb @ Q)).sum(axis=1)  # 1 / v - c_k
    return Face(problem, value, P, Pp, Q, Qp, active, rows, R, alpha, beta, low, start)


def face_is_a_point(a: np.ndarray, b: np.ndarray, dual: np.ndarray | None = None) -> bool:
    """Whether the spectral SVM's optimum is unique (module doc), from `dual`, the SVM's
    duals where its solve found them (one per row of a, b; certified by the caller, as
    svm.uniqueness does), else from the SVM solved again here for them (about 0.1 CPU-s at
    fig2's size). Any optimal duals will do: every optimum lies on the face each one's G
    exposes. DualSolveError where G's rank or the active set is not clear-cut."""
    if np.linalg.matrix_rank(a) < np.linalg.matrix_rank(b):  # the pairs need r_a >= r_b
        a, b = b, a  # the same constraints transposed: the same duals
    if dual is None:
        return describe(a, b).is_a_point()
    dual = np.asarray(dual, dtype=float)
    if dual.shape != (len(a),):
        raise ValueError(f"{dual.shape} duals for {len(a)} constraints")
    _, _, Pp, _, Qp, _, _, _, R = _exposed(SpectralPrimal(a, b), dual)
    return _one_point(Pp, Qp, R)


def least_aligned_point(a: np.ndarray, b: np.ndarray, W_star: np.ndarray):
    """W', the spectral SVM's optimum least aligned with W* on the exact face (module doc),
    or None where the face is one point; DualSolveError where the face's description is
    not clear-cut or the path fails. Uncertified: face_cosine checks it."""
    if np.linalg.matrix_rank(a) < np.linalg.matrix_rank(b):  # the pairs need r_a >= r_b
        found = least_aligned_point(b, a, W_star.T)
        return None if found is None else found.T
    face = describe(a, b)
    if face.is_a_point():
        return None
    Ua, Ub, Pp, Qp, active = face.problem.Ua, face.problem.Ub, face.Pp, face.Qp, face.active
    # the start: the central point on the face, its equalities' part replaced by the
    # least-squares solution of theirs (the equalities hold to rounding where it is used)
    B0 = (Pp.T @ face.start @ Qp).ravel() / face.value
    fitted = np.linalg.lstsq(face.rows, face.low[active], rcond=None)[0]
    R = face.R
    B0 = (B0 - (R @ B0) @ R + (R @ fitted) @ R).reshape(Pp.shape[1], Qp.shape[1])
    D = Pp.T @ (Ua.T @ W_star @ Ub) @ Qp
    lp = _FaceLP(D, face.alpha[~active], face.beta[~active], face.low[~active], R)
    nu = float(sum(lp.shape) + len(lp.low))
    with np.errstate(divide="ignore", invalid="ignore"):
        if not np.isfinite(lp.barrier(B0.ravel(), 1.0)):
            raise DualSolveError("the SVM's central point is not strictly inside the face")
        scale = np.linalg.svd(D, compute_uv=False).sum()
        B = follow_central_path(B0.ravel(), lp, nu, nu / scale, lp.gap, GAP)[0]
    return Ua @ (face.value * (face.P @ face.Q.T + Pp @ B @ Qp.T)) @ Ub.T


def face_cosine(a: np.ndarray, b: np.ndarray, W_star: np.ndarray, bound: float) -> float:
    """cos(W', W*) on the spans of least_aligned_point's W' (1.0 where the face is one
    point), certified: W' rescaled onto margins 1 has spectral norm within `bound` (the
    slab's); DualSolveError where it is not, or where least_aligned_point fails."""
    W = least_aligned_point(a, b, W_star)
    if W is None:
        return 1.0
    smallest = float(((a @ W) * b).sum(axis=1).min())
    if not np.linalg.norm(W, 2) / smallest <= bound:
        raise DualSolveError(f"the probe's point, of value {np.linalg.norm(W, 2):.10g} and "
                             f"smallest margin {smallest:.10g}, lies outside the bound "
                             f"{bound:.10g}")  # fmt: skip
    return float(np.vdot(W, W_star) / (np.linalg.norm(W) * np.linalg.norm(W_star)))
