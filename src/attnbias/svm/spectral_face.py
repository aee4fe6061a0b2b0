"""The spectral norm's canonical point (svm.canonical: the optimal face's least-Frobenius
point) by the barrier method of svm.spectral_nuclear's spectral SVM, on the constraints'
spans (C = U_a^T W U_b, r_a x r_b) and in Y = C / B:

  min ||Y||_F^2  s.t.  margins(Y) >= 1 / B,  ||Y||_2 <= 1,

barrier t ||Y||_F^2 - logdet(I - Y^T Y) - sum log(margin_k - 1 / B). The objective's
Hessian, 2 t I, is 2 t I in any orthonormal bases, so the closed-form Hessian inverse in
Y's singular bases and the Woodbury step over the m margins carry over
(spectral_nuclear._spectral_hessian_inverse's q): an m x m system a Newton step. The path
starts at the SVM's solution scaled strictly between the two constraints (B is (1 + SLACK)
times its value) and is followed until the measured duality gap is GAP (or stops falling:
the best round's point). Every iterate is strictly feasible; the caller certifies the
answer by the KKT check with the SVM's duals and falls back to cvxpy, with a logged line.

Not here: the face probe (svm.uniqueness), the same barrier with the objective <Y, C*>.
Tried and measured (DM, the stored W* of seeds 1 and 2): its LP objective came within
2e-7 (relative) of cvxpy + Clarabel's, but the objective varies by only 1e-4 across the
face, and the cosine of its point with W* moved by 0.012 and 0.027 (0.783 against 0.795,
0.820 against 0.847; up to 0.046 on the new W* of seeds 1 to 5), beyond the two digits
the stored cosines reproduce to (docs/speed.md); its measured
duality gap is lost to rounding (5e-7 to 2 between t ~ 1e8 and 1e9) before it gets there.
"""

from __future__ import annotations

import numpy as np

from attnbias.svm.dual_solves import DualSolveError
from attnbias.svm.spectral_nuclear import (
    SpectralPrimal,
    ball_and_margins_barrier,
    follow_central_path,
)

# the relative duality gap at which the path stops (the SVM's svm.spectral_nuclear.GAP);
# measured, rounding stops it earlier: at 2e-7 on fig2's seed 1 (the point then 3e-6 from
# cvxpy + Clarabel's, which stops at its relative gap 1e-8)
GAP = 1e-9
# t's growth a round and a centring's Newton budget (the SVM's: 100 and 200). The thin set
# (B 1e-7 above the optimum) makes long rounds: on fig2's seed 1, 94 steps at t * 100, at
# most 45 at t * 10; where rounding stops the gap, a short budget wastes few steps
GROWTH = 10.0
ROUND_STEPS = 50


class _Face(SpectralPrimal):
    """x = vec Y (C order), the margins' bound low = 1 / B."""

    def __init__(self, a, b, bound: float):
        super().__init__(a, b)
        self.low = 1.0 / bound

    def barrier(self, x, t):
        Y = x.reshape(self.shape)
        return ball_and_margins_barrier(t * float((Y * Y).sum()), Y, self.margins(Y) - self.low)

    def newton(self, x, t):
        Y = x.reshape(self.shape)
        w = 1.0 / (self.margins(Y) - self.low)
        U, sigma, Vt = np.linalg.svd(Y, full_matrices=True)
        s = 1.0 / ((1.0 - sigma) * (1.0 + sigma))
        gradient = 2.0 * t * Y + 2.0 * Y @ (Vt.T * s) @ Vt - (self.ca * w[:, None]).T @ self.cb
        step = -self.margin_solver(U, sigma, s, Vt.T, w, 2.0 * t)(gradient)
        return gradient.ravel(), step.ravel()

    def answer(self, x, t):
        Y = x.reshape(self.shape)
        return Y, 1.0 / (t * (self.margins(Y) - self.low))

    def gap(self, Y, lam) -> float:
        """The measured duality gap of (Y, lambda) over ||Y||_F^2: ||Y||_F^2 minus the
        Lagrangian dual lambda^T 1 / B + min over ||Y'||_2 <= 1 of ||Y'||_F^2 - <M, Y'>,
        M = sum_k lambda_k A_k (any lambda >= 0 gives a lower bound on the optimum); the
        minimum, in M's singular values mu: sum_j (y_j^2 - mu_j y_j), y_j = min(mu_j / 2, 1)."""
        if not (np.all(lam >= 0) and np.all(np.isfinite(Y))):
            return np.inf
        mu = np.linalg.svd((self.ca * lam[:, None]).T @ self.cb, compute_uv=False)
        y = np.minimum(mu / 2.0, 1.0)
        value = float((Y * Y).sum())
        return (value - self.low * lam.sum() - float((y * y - mu * y).sum())) / value


def least_norm_point(a, b, bound: float, start: np.ndarray) -> np.ndarray:
    """argmin ||W||_F s.t. a_k^T W b_k >= 1, ||W||_2 <= bound, W in the spans (module doc),
    from `start` (the SVM's solution, of value below `bound`); DualSolveError where no
    strictly feasible point lies on start's ray or the path fails."""
    if np.linalg.matrix_rank(a) < np.linalg.matrix_rank(b):  # the pairs need r_a >= r_b
        return least_norm_point(b, a, bound, start.T).T
    problem = _Face(a, b, bound)
    C = problem.Ua.T @ start @ problem.Ub
    # C scaled strictly inside both constraints: s min margin > 1 / B and s ||C||_2 < 1
    smallest, largest = problem.margins(C).min() * bound, np.linalg.norm(C, 2)
    if not (smallest > 0 and largest < smallest):
        raise DualSolveError(f"the start's spectral norm over its smallest margin is "
                             f"{largest / smallest * bound:.10g}, not below the bound "
                             f"{bound:.10g}")  # fmt: skip
    Y = C / np.sqrt(smallest * largest)
    nu = float(sum(problem.shape) + len(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = nu / float((Y * Y).sum())
        x = Y.ravel()
        found = follow_central_path(x, problem, nu, t, problem.gap, GAP, ROUND_STEPS, GROWTH)
    return problem.Ua @ (found[0] / problem.low) @ problem.Ub.T
