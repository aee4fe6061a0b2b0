"""The spectral and nuclear W-SVMs, min ||W|| s.t. <a_k b_k^T, W> >= 1, by barrier methods
on the constraints' spans with Newton systems of the small sizes (svm.norms solves them
through these, cvxpy + Clarabel being the reference and the logged fallback):

  nuclear   in its dual, max sum(lambda) s.t. ||G(lambda)||_2 <= 1, lambda >= 0,
            G = sum_k lambda_k a_k b_k^T. The LMI [[I, G], [G^T, I]] >= 0 that cvxpy
            writes (r_a + r_b rows) has log-determinant logdet(I - G^T G), and G^T G =
            c_b^T Lambda K_a Lambda c_b is r_b x r_b (r_b <= n = 20; K_a = a a^T, c_b the
            b_k in an orthonormal basis of their span): the barrier, its gradient and its
            Hessian in the m duals cost m x m and r_b x r_b algebra. The central point's
            LMI multiplier gives the primal, W = (2 / t) a^T Lambda c_b (I - G^T G)^-1 U_b^T
            (cvxpy's C = -2 times the multiplier's off-diagonal block), whose margins
            are 1 + 1 / (t lambda_k): feasible on the way.
  spectral  in the primal, max gamma s.t. margins(C) >= gamma, ||C||_2 <= 1 over C =
            U_a^T W U_b (r_a x r_b; W = U_a C U_b^T / gamma), barrier
            -logdet(I - C^T C) - sum log(margin_k - gamma). That barrier's Hessian in C
            is, in C's singular bases, diagonal but for 2 x 2 blocks pairing C_ij with
            C_ji, so it is inverted in closed form and the m margins enter by Woodbury:
            an m x m system a Newton step. The duals are lambda_k = 1 / (t (margin_k -
            gamma)), G(lambda) = 2 C (I - C^T C)^-1 / t.

Both follow the central path (t grows by T_GROWTH a round; Newton steps, each kept
strictly feasible) until the measured duality gap of the answer is GAP (follow_central_path). Each
returns (W, lambda) or raises DualSolveError saying why (the Newton budget spent, no
feasible step, no finite gap); the caller (svm.norms) certifies the answer with the KKT
check, which alone decides whether it is used (else cvxpy, with a logged line). Why
barrier methods: at these optima the duals are not smooth (few active constraints leave G
of low rank; the spectral optimum's top singular values coalesce), which is why no smooth
dual method had been found (docs/speed.md); a barrier keeps every iterate inside, where
all is smooth, and ends near the face's analytic centre like Clarabel's interior point.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from attnbias.svm.dual_solves import DualSolveError, gram_dual
from attnbias.svm.norm_values import dual_norm_value, norm_value

KINDS = ("spectral", "nuclear")
# the central path: t multiplied by T_GROWTH per round, until the measured relative duality
# gap is GAP (Clarabel's default relative gap 1e-8, ten times tighter; the KKT check allows
# 1e-6); the Newton budget over all rounds, and each centring's stop (half the squared
# Newton decrement)
T_GROWTH = 100.0
GAP = 1e-9
# a centring's budget: where it is spent and the gap no longer falls, rounding has taken
# over (measured: 25 to 50 steps a round at t * 100 on fig2's and DM's seed 1 before
# _long_step, up to ~150 on DM's seed 4, where a budget of 40 stalled the gap at 9e-4)
ROUND_STEPS = 200
NEWTON_BUDGET = 2000
CENTRED = 1e-10
SHRINK = 0.5  # a step that leaves the domain (rounding) is halved
# a squared Newton decrement below this that no longer halves in 5 steps: rounding (at t ~
# 1e11 the decrement stalls near 1e-9, where 200 further steps gained nothing)
STALLED = 1e-6
# no round goes beyond: far past any gap a double can resolve, far below overflow (a
# path whose gap stopped being measured had grown t to inf: geometry_cross's tuning seed)
T_LIMIT = 1e100


def orthonormal_basis(rows: np.ndarray) -> np.ndarray:
    """(d, r): an orthonormal basis of the span of `rows` (m, d) (svm.norms' reduction to
    the constraints' spans, and this module's)."""
    U, s, _ = np.linalg.svd(rows.T, full_matrices=False)
    keep = s > s.max(initial=0.0) * max(rows.shape) * np.finfo(float).eps
    return U[:, keep]


def follow_central_path(
    x, problem, nu: float, t: float, gap, tolerance=GAP, round_steps=ROUND_STEPS, growth=T_GROWTH
):
    """The central path from the strictly feasible x: minimise problem.barrier(x, t) (inf
    outside) by damped Newton steps (problem.newton(x, t) -> (gradient, step)), t *=
    T_GROWTH until the answer's measured duality gap, gap(*problem.answer(x, t)), is
    within `tolerance` (GAP), or stops falling (rounding in the ill-conditioned systems of
    large t, where a Newton step may come out no descent direction: that ends the round,
    and a round's gap above the best's returns the best round's answer, which the KKT
    check judges). Both
    barriers are self-concordant (log-determinants of LMIs affine in x, logs of affine
    margins): the step 1 / (1 + delta) (delta the Newton decrement) stays inside and
    decreases the barrier, and from delta < 1/4 on full steps converge quadratically; no
    function values are compared, which at large t could not resolve the last decreases.
    Far from the centre the step is longer where it stays inside (_long_step). A centring
    stops after `round_steps` Newton steps (ROUND_STEPS); t grows by `growth` (T_GROWTH).
    problem.answer(x, t) at the end. This module's two barriers and those built on
    SpectralPrimal (svm.spectral_face, svm.spectral_probe) all follow their paths here."""
    steps, best = 0, (np.inf, None)
    while True:
        centring, smallest, since = 0, np.inf, 0
        while True:
            gradient, step = problem.newton(x, t)
            descent = -float(gradient @ step)  # the squared Newton decrement
            if not descent > 0:  # no descent direction: the system is lost to rounding
                break  # (it had read as centred); the round's gap will judge
            delta = np.sqrt(descent)
            if delta**2 < smallest / 2:
                smallest, since = delta**2, centring
            stalled = delta**2 < STALLED and centring - since >= 5  # rounding: no more halving
            if delta**2 / 2 <= CENTRED or stalled or centring >= round_steps:
                break  # centred, or as far as rounding lets it be: the gap will judge
            centring += 1
            size = 1.0 if delta < 0.25 else _long_step(problem, x, step, t, 1.0 / (1.0 + delta))
            while not np.isfinite(problem.barrier(x + size * step, t)):  # rounding at the edge
                size *= SHRINK
                if size < 1e-12:
                    raise DualSolveError(f"no feasible step at t={t:.3g} (decrement {delta:.2g})")
            x = x + size * step
            steps += 1
            if steps > NEWTON_BUDGET:
                raise DualSolveError(f"{NEWTON_BUDGET} Newton steps without reaching the gap")
        answer = problem.answer(x, t)
        found = gap(*answer)
        if found <= tolerance:
            return answer
        # a centred round's gap is about nu / t, less each round: where it is not, rounding
        # has taken over (a round that ends off the path, as after a lost Newton system,
        # may measure any gap), and the best round's answer is the KKT check's to judge
        if found < best[0]:
            best = (found, answer)
        elif best[1] is not None:
            return best[1]
        t *= growth
        if t > T_LIMIT:
            if best[1] is None:
                raise DualSolveError(f"no round reached a finite gap (t={t:.3g})")
            return best[1]


def _long_step(problem, x, step, t: float, safe: float) -> float:
    """Far from the centre: half the longest step of 1, 1/2, 1/4, ... that stays inside,
    not less than the self-concordant `safe` = 1 / (1 + delta). Not guaranteed to decrease
    the barrier, but measured: fig2's spectral SVM in 94 Newton steps instead of 224 (DM
    seed 1: 75 for 86), the nuclear ones in 134 and 128 for 183 and 251; the Newton budget
    bounds it and the KKT check judges the answer."""
    size = 1.0
    while size > safe and not np.isfinite(problem.barrier(x + size * step, t)):
        size *= SHRINK
    return max(size / 2, safe)


def _measured_gap(a, b, norm: str):
    """(W, lambda) -> ||W|| / sum(lambda) - 1 after scaling W onto feasibility (smallest
    margin 1) and lambda onto the dual norm's unit ball: both feasible, so >= 0 and 0
    only at the optimum (the KKT check's other conditions follow within it)."""

    def gap(W, lam):
        low = float(((a @ W) * b).sum(axis=1).min())
        dual = dual_norm_value((a * lam[:, None]).T @ b, norm)
        if not (low > 0 and dual > 0 and np.all(np.isfinite(W))):
            return np.inf
        return norm_value(W, norm) / low / (lam.sum() / dual) - 1.0

    return gap


# ---- nuclear: the dual, lambda in R^m ---------------------------------------------------


class _NuclearDual:
    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.Ub = a, orthonormal_basis(b)
        self.cb, self.Ka = b @ self.Ub, a @ a.T

    def gram(self, lam):
        """I - G^T G (r_b x r_b) and H = K_a Lambda c_b."""
        H = self.Ka @ (lam[:, None] * self.cb)
        return np.eye(self.cb.shape[1]) - self.cb.T @ (lam[:, None] * H), H

    def barrier(self, lam, t):
        if not np.all(lam > 0):
            return np.inf
        return -t * lam.sum() - _log_det_inside(self.gram(lam)[0]) - np.log(lam).sum()

    def newton(self, lam, t):
        S, H = self.gram(lam)
        R = np.linalg.inv(S)
        cR, hR = self.cb @ R, H @ R
        P = hR @ self.cb.T  # P_kl = h_k^T R c_l
        gradient = -t + 2.0 * np.diag(P) - 1.0 / lam
        Qc = cR @ self.cb.T
        hessian = 2.0 * (self.Ka * Qc + P * P.T + (hR @ H.T) * Qc) + np.diag(1.0 / lam**2)
        return gradient, -_solve_psd(hessian, gradient)

    def answer(self, lam, t):
        S, _ = self.gram(lam)
        return (2.0 / t) * (self.a.T @ (lam[:, None] * self.cb)) @ np.linalg.solve(
            S, self.Ub.T
        ), lam


def nuclear(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(W, lambda) of min ||W||_* s.t. a_k^T W b_k >= 1 (module doc)."""
    problem = _NuclearDual(a, b)
    start = gram_dual((a @ a.T) * (b @ b.T))
    lam = start + 0.1 * start.mean()
    S, _ = problem.gram(lam)
    lam = lam * 0.5 / np.sqrt(max(1.0 - np.linalg.eigvalsh(S).min(), 1e-300))  # ||G||_2 = 1/2
    nu = 2.0 * problem.cb.shape[1] + len(lam)
    return follow_central_path(lam, problem, nu, nu / lam.sum(), _measured_gap(a, b, "nuclear"))


# ---- spectral: the primal, (C, gamma) ---------------------------------------------------


def ball_and_margins_barrier(objective: float, C: np.ndarray, slack: np.ndarray) -> float:
    """objective - logdet(I - C^T C) - sum(log slack): a t-scaled objective plus the barrier
    of the spectral-norm ball ||C||_2 < 1 and of the margins' slacks; inf outside (the
    spectral SVM's and its face's problems)."""
    if not np.all(slack > 0):
        return np.inf
    return objective - _log_det_inside(np.eye(C.shape[1]) - C.T @ C) - np.log(slack).sum()


def _log_det_inside(S: np.ndarray) -> float:
    """log det S for S symmetric positive definite, -inf (the barrier inf) where it is not:
    one Cholesky factorisation, which fails exactly there, its diagonal the determinant's
    square root (a slogdet and an eigvalsh had cost twice as much, and a barrier is
    evaluated about five times a Newton step)."""
    try:
        return 2.0 * float(np.log(np.diag(np.linalg.cholesky(S))).sum())
    except np.linalg.LinAlgError:
        return -np.inf


class SpectralPrimal:
    """The spectral SVM's primal on the constraints' spans (module doc) as a problem for
    follow_central_path: x = (vec C (r_a x r_b, C order), gamma), r_a >= r_b. Its bases,
    margins and Newton system (margin_solver) are shared by the barriers built on the same
    C (svm.spectral_face's canonical point, svm.spectral_probe's face LP)."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.Ua, self.Ub = orthonormal_basis(a), orthonormal_basis(b)
        self.ca, self.cb = a @ self.Ua, b @ self.Ub
        self.shape = (self.Ua.shape[1], self.Ub.shape[1])

    def split(self, x):
        return x[:-1].reshape(self.shape), x[-1]

    def answer(self, x, t):
        C, gamma = self.split(x)
        lam = 1.0 / (t * (self.margins(C) - gamma))
        return self.Ua @ (C / gamma) @ self.Ub.T, lam

    def margins(self, C):  # C (r_a, r_b), or stacked (k, r_a, r_b): (k, m)
        return ((self.ca @ C) * self.cb).sum(axis=-1)

    @cached_property
    def Ka(self):  # c_a c_a^T = alpha alpha^T for any orthogonal U (_gram_in_inverse)
        return self.ca @ self.ca.T

    @cached_property
    def _pair_buffers(self):
        """Three (m, r_b, r_b) arrays that _gram_in_inverse fills anew every Newton step:
        measured, a fresh one of fig2's 256 KB cost more than the product that reads it
        (the allocator maps and faults in new pages each time: 0.4 ms against 0.07)."""
        return np.empty((3, len(self.ca), self.shape[1], self.shape[1]))

    def barrier(self, x, t):
        C, gamma = self.split(x)
        return ball_and_margins_barrier(-t * gamma, C, self.margins(C) - gamma)

    def _gram_in_inverse(self, U, sigma, s, V, q: float = 0.0):
        """<A_k, Hf^-1 A_l> (m x m) from the rotated rows alpha = c_a U, beta = c_b V
        (A_k = alpha_k beta_k^T there): rows i >= r_b weigh 1 / (2 s_j + q), their
        alpha alpha^T K_a less the top rows' (U thin or full); the top r_b rows pair
        entries ij and ji (_spectral_hessian_inverse, q as there), each pair's 2 x 2
        inverse block factored (_pair_factors), so that their part is F F^T: one
        symmetric product (m x r_b^2) half the cost of the general one it replaced."""
        r = len(sigma)
        alpha, beta = self.ca @ U[:, :r], self.cb @ V
        bottom = (self.Ka - alpha @ alpha.T) * ((beta / (2.0 * s + q)) @ beta.T)
        first, swapped = _pair_factors(sigma, s, q)
        P, F, swap = self._pair_buffers
        np.multiply(alpha[:, :, None], beta[:, None, :], out=P)  # alpha_i beta_j
        np.multiply(P, first, out=F)
        F += np.multiply(P.transpose(0, 2, 1), swapped, out=swap)
        F = F.reshape(len(alpha), -1)
        return bottom + F @ F.T

    def margin_solver(self, U, sigma, s, V, w, q: float = 0.0):
        """V -> E^-1 V for E = Hf + A^T D A (D = w^2, Hf _spectral_hessian_inverse's at
        C = U diag(sigma) V^T, with q): by Woodbury, E^-1 V = Hf^-1 (V - A^T (D^-1 +
        A Hf^-1 A^T)^-1 A Hf^-1 V); V (r_a, r_b) or stacked (k, r_a, r_b), the m x m
        matrix factored once (Cholesky; lstsq where it is numerically singular)."""
        inverse = _spectral_hessian_inverse(U, sigma, s, V, q)
        inner = np.diag(1.0 / w**2) + self._gram_in_inverse(U, sigma, s, V, q)
        try:
            factor = cho_factor(inner, check_finite=False)
            solve = lambda rhs: cho_solve(factor, rhs, check_finite=False)  # noqa: E731
        except np.linalg.LinAlgError:
            solve = lambda rhs: np.linalg.lstsq(inner, rhs, rcond=None)[0]  # noqa: E731

        def solve_E(R):
            stacked = R if R.ndim == 3 else R[None]
            coefficients = solve(self.margins(inverse(stacked)).T)  # (m, k)
            found = inverse(stacked - (self.ca.T * coefficients.T[:, None, :]) @ self.cb)
            return found if R.ndim == 3 else found[0]

        return solve_E

    def newton(self, x, t):
        C, gamma = self.split(x)
        w = 1.0 / (self.margins(C) - gamma)
        U, sigma, Vt = np.linalg.svd(C, full_matrices=False)  # thin: all the inverse reads
        s = 1.0 / ((1.0 - sigma) * (1.0 + sigma))
        solve_E = self.margin_solver(U, sigma, s, Vt.T, w)
        gC = 2.0 * C @ (Vt.T * s) @ Vt - (self.ca * w[:, None]).T @ self.cb
        gg = -t + w.sum()
        h = -(self.ca * (w**2)[:, None]).T @ self.cb  # H_{C gamma}
        Eg, Eh = solve_E(np.stack([gC, h]))
        schur = (w**2).sum() - float(np.vdot(h, Eh))
        dgamma = (-gg + float(np.vdot(h, Eg))) / schur
        dC = -Eg - dgamma * Eh
        return np.append(gC.ravel(), gg), np.append(dC.ravel(), dgamma)


def _pair_weights(sigma, s, q: float = 0.0):
    """The 2 x 2 blocks of the Hessian of -logdet(I - C^T C) + (q / 2) ||C||_F^2 in C's
    singular bases and their determinants, with the sigma^2 s^2 terms cancelled by hand
    (they grow as t^2)."""
    si, sj = s[:, None], s[None, :]
    a = 2.0 * sj + 2.0 * (sigma**2)[:, None] * si * sj  # coefficient of D_ij in H_ij
    c = 2.0 * sigma[:, None] * sigma[None, :] * si * sj  # of D_ji in H_ij
    det = 4.0 * si * sj * (1.0 + (sigma**2 * s)[None, :] + (sigma**2 * s)[:, None])
    if q:  # q I is q I in any orthonormal bases: on each block's diagonal
        det, a = det + q * (a + a.T) + q**2, a + q
    return a, c, det


def _pair_factors(sigma, s, q: float = 0.0):
    """(first, swapped), r x r: with F_ij = first_ij P_ij + swapped_ij P_ji, sum_ij F_ij
    F'_ij is the top rows' <P, Hf^-1 P'> (_gram_in_inverse). Each pair's inverse block
    [[a_ji, -c], [-c, a_ij]] / det (i < j) is L L^T by Cholesky, whose entries are
    sqrt(a_ji / det), -c / sqrt(det a_ji) and, as det = a_ij a_ji - c^2, 1 / sqrt(a_ji)
    (no cancellation); a diagonal entry weighs (a_ii - c_ii) / det_ii = 1 / (a_ii + c_ii)."""
    a, c, det = _pair_weights(sigma, s, q)
    upper = np.triu(np.ones(a.shape, dtype=bool), 1)
    first = np.where(upper, np.sqrt(a.T / det), 1.0 / np.sqrt(a))  # below: (j, i)'s second
    np.fill_diagonal(first, 1.0 / np.sqrt(np.diag(a) + np.diag(c)))
    return first, np.where(upper, -c / np.sqrt(det * a.T), 0.0)


def _spectral_hessian_inverse(U, sigma, s, V, q: float = 0.0):
    """V -> Hf^-1 V for Hf the Hessian of -logdet(I - C^T C) + (q / 2) ||C||_F^2 at C =
    U diag(sigma) V^T (module doc): in the singular bases, H_ij = (2 s_j + q) D_ij + 2
    sigma_i s_i s_j (sigma_j D_ji + sigma_i D_ij) for i < r_b, (2 s_j + q) D_ij below;
    inverted per pair."""
    r = len(sigma)
    a, c, det = _pair_weights(sigma, s, q)
    Ur = U[:, :r]  # U thin or full: the rows below enter as the complement of these

    def apply(Vs):  # Vs: (k, r_a, r_b)
        Y = Vs @ V
        top = Ur.T @ Y
        paired = (a.T[None] * top - c[None] * top.transpose(0, 2, 1)) / det[None]
        return (Ur @ paired + (Y - Ur @ top) / (2.0 * s + q)) @ V.T

    return apply


def spectral(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(W, lambda) of min ||W||_2 s.t. a_k^T W b_k >= 1 (module doc)."""
    if np.linalg.matrix_rank(a) < np.linalg.matrix_rank(b):  # the pairs below need r_a >= r_b
        W, lam = spectral(b, a)
        return W.T, lam
    problem = SpectralPrimal(a, b)
    W0 = (a * gram_dual((a @ a.T) * (b @ b.T))[:, None]).T @ b  # the Frobenius SVM
    C0 = problem.Ua.T @ W0 @ problem.Ub
    C0 = 0.5 * C0 / np.linalg.norm(C0, 2)
    gamma0 = 0.5 * problem.margins(C0).min()
    x = np.append(C0.ravel(), gamma0)
    nu = float(sum(problem.shape) + len(a))
    return follow_central_path(x, problem, nu, nu / gamma0, _measured_gap(a, b, "spectral"))


def solve(a: np.ndarray, b: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(W, lambda) of the spectral or nuclear W-SVM of the rows a_k, b_k (uncertified)."""
    if kind not in KINDS:
        raise ValueError(f"svm.spectral_nuclear solves {KINDS}, not {kind!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        return (spectral if kind == "spectral" else nuclear)(a, b)


def _solve_psd(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """matrix^-1 rhs for a symmetric positive definite matrix (Cholesky; lstsq where it is
    numerically singular)."""
    try:
        factor = np.linalg.cholesky(matrix)
        return np.linalg.solve(factor.T, np.linalg.solve(factor, rhs))
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(matrix, rhs, rcond=None)[0]
