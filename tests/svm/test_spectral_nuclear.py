"""The spectral and nuclear W-SVMs' barrier methods (attnbias.svm.spectral_nuclear): their
derivatives against finite differences, the spectral Hessian's closed-form inverse, their
answers against the cvxpy + Clarabel reference and KKT on random and real (Example 1, DM)
instances, each with a control that fails; the logged fallback and the refusals, named.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import max_margin, norms, spectral_nuclear
from attnbias.svm.norm_values import norm_value

cp = pytest.importorskip("cvxpy")

KINDS = ["spectral", "nuclear"]


def _rows(data):
    return max_margin.w_svm_constraints(data["X"], data["opt"])


def _instances():
    """Random instances whose spans are proper (r_a, r_b < d) and real ones of both data
    models at reduced size."""
    return {
        "example1 n6 T3 d5": models.example1(np.random.default_rng(3), n=6, T=3, d=5),
        "example1 n8 T4 d30": models.example1(np.random.default_rng(5), n=8, T=4, d=30),
        "dm n10 T4 d40": models.data_model_dm(
            np.random.default_rng(7), n=10, T=4, d=40, mu_norm=1.0, noise_scale=0.5
        ),
    }


INSTANCES = _instances()


def _finite_differences(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((12, 6))
    b = rng.standard_normal((12, 3)) @ rng.standard_normal((3, 6))  # rank 3 < 6
    return a, b


def _nuclear_point(small):
    problem = spectral_nuclear._NuclearDual(*small)
    return problem, np.random.default_rng(1).uniform(0.01, 0.02, len(small[0]))


def _spectral_point(small):
    problem = spectral_nuclear.SpectralPrimal(*small)
    C = np.random.default_rng(2).standard_normal(problem.shape)
    C *= 0.5 / np.linalg.norm(C, 2)
    return problem, np.append(C.ravel(), problem.margins(C).min() - 1.0)


@pytest.mark.parametrize("point", [_nuclear_point, _spectral_point])
def test_barrier_gradient_and_newton_step_match_finite_differences(small, point):
    """The gradient is the barrier's, and the Newton step solves the system of the
    gradient's own finite-difference Hessian (the spectral one through the closed-form
    inverse and Woodbury). The control: the step at another t is not this t's."""
    problem, x = point(small)
    t = 3.0
    gradient, step = problem.newton(x, t)
    numeric = _finite_differences(lambda z: problem.barrier(z, t), x)
    assert np.abs(gradient - numeric).max() < 1e-6 * np.abs(gradient).max()
    hessian = _finite_differences(lambda z: problem.newton(z, t)[0], x)
    assert np.abs(step + np.linalg.solve(hessian, gradient)).max() < 1e-6 * np.abs(step).max()
    other = problem.newton(x, 30.0)[1]
    assert np.abs(other + np.linalg.solve(hessian, gradient)).max() > 1e-2 * np.abs(step).max()


def test_spectral_hessian_inverse_inverts_the_hessian():
    """Hf^-1 (Hf(D)) = D with Hf(D) = 2 D S^-1 + 2 C S^-1 (D^T C + C^T D) S^-1, S = I -
    C^T C; and <A_k, Hf^-1 A_l> as _gram_in_inverse computes it. The control: without the
    2 x 2 pairing of D_ij with D_ji the map is not the inverse."""
    rng = np.random.default_rng(4)
    C = rng.standard_normal((7, 4))
    C *= 0.9 / np.linalg.norm(C, 2)
    D = rng.standard_normal((7, 4))
    Sinv = np.linalg.inv(np.eye(4) - C.T @ C)
    H = 2 * D @ Sinv + 2 * C @ Sinv @ (D.T @ C + C.T @ D) @ Sinv
    U, sigma, Vt = np.linalg.svd(C, full_matrices=True)
    s = 1.0 / (1.0 - sigma**2)
    inverse = spectral_nuclear._spectral_hessian_inverse(U, sigma, s, Vt.T)
    assert np.abs(inverse(H[None])[0] - D).max() < 1e-10
    unpaired = (U.T @ H @ Vt.T) / (2 * s + 4 * sigma**2 * s**2)[None, :]  # diagonal only
    assert np.abs(U @ unpaired @ Vt - D).max() > 1e-2
    a, b = rng.standard_normal((9, 7)), rng.standard_normal((9, 4))
    problem = spectral_nuclear.SpectralPrimal(a, b)
    Cr = problem.Ua.T @ C @ problem.Ub
    Ur, sr, Vr = np.linalg.svd(Cr, full_matrices=True)
    inv = spectral_nuclear._spectral_hessian_inverse(Ur, sr, 1 / (1 - sr**2), Vr.T)
    Y = inv(problem.ca[:, :, None] * problem.cb[:, None, :])
    direct = np.einsum("ki,lij,kj->kl", problem.ca, Y, problem.cb)
    fast = problem._gram_in_inverse(Ur, sr, 1 / (1 - sr**2), Vr.T)
    assert np.abs(direct - fast).max() < 1e-10 * np.abs(direct).max()
    thin = Ur[:, : len(sr)]  # the Newton step's thin SVD: the rows below as a complement
    assert np.abs(problem._gram_in_inverse(thin, sr, 1 / (1 - sr**2), Vr.T) - direct).max() < (
        1e-10 * np.abs(direct).max()
    )
    thin_inverse = spectral_nuclear._spectral_hessian_inverse(thin, sr, 1 / (1 - sr**2), Vr.T)
    R = rng.standard_normal((2, *Cr.shape))
    assert np.abs(thin_inverse(R) - inv(R)).max() < 1e-10 * np.abs(inv(R)).max()


def test_the_log_determinant_is_inside_exactly_where_cholesky_is():
    """The barriers' log det by one Cholesky factorisation: slogdet's value on a positive
    definite matrix, -inf (the barrier inf) on an indefinite one whose determinant is
    positive (two negative eigenvalues: the control, which slogdet's sign alone passes)."""
    rng = np.random.default_rng(6)
    Q = np.linalg.qr(rng.standard_normal((5, 5)))[0]
    inside = Q @ np.diag([1e-3, 0.1, 1.0, 2.0, 3.0]) @ Q.T
    assert spectral_nuclear._log_det_inside(inside) == pytest.approx(
        np.linalg.slogdet(inside)[1], rel=1e-10
    )
    outside = Q @ np.diag([-0.5, -0.1, 1.0, 2.0, 3.0]) @ Q.T
    assert np.linalg.slogdet(outside)[0] > 0
    assert spectral_nuclear._log_det_inside(outside) == -np.inf
    C = rng.standard_normal((6, 3))
    for norm, finite in ((0.999, True), (1.001, False)):
        value = spectral_nuclear.ball_and_margins_barrier(
            0.0, C * norm / np.linalg.norm(C, 2), np.ones(2)
        )
        assert np.isfinite(value) == finite


@pytest.mark.parametrize("name", sorted(INSTANCES))
@pytest.mark.parametrize("norm", KINDS)
def test_answer_is_certified_and_the_reference_value(name, norm, caplog):
    """svm.norms solves through the barrier method without falling back (no logged line),
    its answer passes the KKT check far inside 1e-6, and its value is cvxpy + Clarabel's
    to 1e-7. The control: the other norm's answer fails this norm's check."""
    data = INSTANCES[name]
    X, opt = data["X"], data["opt"]
    with caplog.at_level(logging.WARNING, logger="attnbias.svm.norms"):
        s = norms.solve_w_svm_norm(X, opt, norm, name=name)
    assert not caplog.records, caplog.text
    assert norms.optimality_defect(s, X, opt, norm) is None
    assert s.optimality_residual < 1e-7
    reference = norms.solve_svm_norm_reference(X, opt, norm)
    assert s.value == pytest.approx(reference.value, rel=1e-7)
    other = "nuclear" if norm == "spectral" else "spectral"
    wrong = norms.solve_w_svm_norm(X, opt, other)
    assert "not optimal" in norms.optimality_defect(wrong, X, opt, norm)


def test_unique_nuclear_optimum_is_the_references_point():
    """Where the nuclear optimum is one point (svm.canonical's test on the duals), both
    solvers find it: W to 1e-4 relative. The control: the spectral optimum is elsewhere."""
    from attnbias.svm.canonical import _nuclear_face_is_a_point

    data = INSTANCES["dm n10 T4 d40"]
    X, opt = data["X"], data["opt"]
    a, b = _rows(data)
    s = norms.solve_w_svm_norm(X, opt, "nuclear")
    assert _nuclear_face_is_a_point(a, b, s.dual)
    reference = norms.solve_svm_norm_reference(X, opt, "nuclear")
    distance = np.linalg.norm(s.solution - reference.solution) / np.linalg.norm(s.solution)
    assert distance < 1e-4
    spectral = norms.solve_w_svm_norm(X, opt, "spectral").solution / s.value
    assert np.linalg.norm(spectral - s.solution / s.value) > 1e-2 * np.linalg.norm(s.solution)


def test_a_dropped_constraint_gives_an_answer_the_check_refuses():
    """The control on the certification: solved without one active constraint, the answer
    is optimal for the rest and fails the full problem's KKT check."""
    data = INSTANCES["example1 n8 T4 d30"]
    X, opt = data["X"], data["opt"]
    a, b = _rows(data)
    for norm in KINDS:
        full = norms.solve_w_svm_norm(X, opt, norm)
        k = int(np.argmax(full.dual))
        keep = np.arange(len(a)) != k
        W, lam = spectral_nuclear.solve(a[keep], b[keep], norm)
        padded = np.insert(lam, k, 0.0)
        found = norms.NormSVMSolution(W, padded, None, norm_value(W, norm), None)
        assert norms.optimality_defect(found, X, opt, norm) is not None


@pytest.mark.parametrize("norm", KINDS)
def test_a_spent_newton_budget_falls_back_to_cvxpy_with_a_named_line(monkeypatch, caplog, norm):
    """Non-convergence within the budget: the cvxpy reference's answer, with a logged line
    naming the experiment, seed, norm and token set, and why."""
    data = INSTANCES["example1 n6 T3 d5"]
    monkeypatch.setattr(spectral_nuclear, "NEWTON_BUDGET", 2)
    with caplog.at_level(logging.WARNING, logger="attnbias.svm.norms"):
        s = norms.solve_w_svm_norm(data["X"], data["opt"], norm, name="experiment toy, seed 3")
    for part in ("experiment toy, seed 3", f"{norm} norm", "optimal tokens [", "Newton steps",
                 "cvxpy reference"):  # fmt: skip
        assert part in caplog.text, (part, caplog.text)
    reference = norms.solve_svm_norm_reference(data["X"], data["opt"], norm)
    assert np.array_equal(s.solution, reference.solution)


@pytest.mark.parametrize("norm", KINDS)
def test_infeasible_and_degenerate_sets_are_refused_named(norm):
    """No W meets the constraints (two sequences alike but for their optimal tokens), or a
    constraint row is zero: refused naming the dataset, norm and token set. The control:
    the degenerate set moved by 1e-3 solves."""
    seq = np.random.default_rng(0).standard_normal((3, 8))
    X, opt = np.stack([seq, seq]), np.array([1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(max_margin.InfeasibleSVMError) as info:
            norms.solve_w_svm_norm(X, opt, norm, name="experiment toy, seed 2")
    for part in ("experiment toy, seed 2", f"{norm} norm", "tokens [1 2]"):
        assert part in str(info.value), (part, str(info.value))
    X = INSTANCES["example1 n6 T3 d5"]["X"].copy()
    opt = INSTANCES["example1 n6 T3 d5"]["opt"]
    other = (opt[0] + 1) % X.shape[1]
    X[0, other] = X[0, opt[0]]
    with pytest.raises(max_margin.InfeasibleSVMError, match=f"{norm} norm.*seed 4.*degenerate"):
        norms.solve_w_svm_norm(X, opt, norm, name="experiment toy, seed 4")
    X[0, other] += 1e-3 * np.random.default_rng(0).standard_normal(X.shape[2])
    assert norms.solve_w_svm_norm(X, opt, norm).value > 0


def test_solve_refuses_other_norms():
    with pytest.raises(ValueError, match="not 'max'"):
        spectral_nuclear.solve(np.ones((1, 2)), np.ones((1, 2)), "max")


def _cross_tuning_instance():
    """geometry_cross's tuning seed 0 (cross_gaussian n=6, T=8, d=10) with the token set a
    run selected there, [7 4 2 1 6 2]: its spectral SVM's central path loses its Newton
    system to rounding at t ~ 5e10 (a margin's slack 1e-11, weights 1/slack^2 ~ 5e21),
    which had read as 'centred' and sent t to overflow (benchmarks/geometry_tuning.py)."""
    data = models.generate("cross_gaussian", 0, {"n": 6, "T": 8, "d": 10})
    return data["X"], np.array([7, 4, 2, 1, 6, 2]), data["Z"]


def test_a_central_path_that_loses_its_newton_system_ends_at_its_best_round(caplog):
    """The cross-attention instance above: solved without a warning (overflow had been
    raised before the fallback) and without a logged fallback, certified by the KKT
    check, its value cvxpy + Clarabel's to 1e-6. The control: the answer of the round
    after the best (t * T_GROWTH, where the system is lost) fails the check."""
    X, opt, Z = _cross_tuning_instance()
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, "attnbias.svm.norms"):
        warnings.simplefilter("error")
        s = norms.solve_w_svm_norm(X, opt, "spectral", name="geometry_cross seed 0", queries=Z)
    assert not caplog.records, caplog.text
    assert norms.optimality_defect(s, X, opt, "spectral", queries=Z) is None
    reference = norms.solve_svm_norm_reference(X, opt, "spectral", queries=Z)
    assert s.value == pytest.approx(reference.value, rel=1e-6)
    a, b = norms.w_rows(X, opt, Z)
    gaps, follow = [], spectral_nuclear.follow_central_path
    gap = spectral_nuclear._measured_gap(a, b, "spectral")

    def every_round(x, problem, nu, t, _, *args):
        def recorded(W, lam):
            gaps.append((gap(W, lam), W, lam))
            return gaps[-1][0]

        return follow(x, problem, nu, t, recorded, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spectral_nuclear, "follow_central_path", every_round)
        spectral_nuclear.solve(a, b, "spectral")
    lost = gaps[-1]
    assert lost[0] > 1e3 * min(g[0] for g in gaps)  # the last round's gap rose
    W = lost[1].reshape(X.shape[2], X.shape[2])
    found = norms.NormSVMSolution(W, lost[2], None, norm_value(W, "spectral"), None)
    assert norms.optimality_defect(found, X, opt, "spectral", queries=Z) is not None


class _Ray:
    """max x s.t. x < 1 as follow_central_path's problem (barrier -t x - log(1 - x)), whose
    Newton system is 'lost' (the step points uphill) from t = `lost_at` on."""

    def __init__(self, lost_at: float):
        self.lost_at, self.calls = lost_at, 0

    def barrier(self, x, t):
        return -t * x[0] - np.log(1.0 - x[0]) if x[0] < 1.0 else np.inf

    def newton(self, x, t):
        self.calls += 1
        gradient = np.array([-t + 1.0 / (1.0 - x[0])])
        step = -gradient * (1.0 - x[0]) ** 2
        return gradient, (-step if t >= self.lost_at else step)

    def answer(self, x, t):
        return x, t


def test_the_central_path_stops_where_rounding_takes_over():
    """A Newton step that is no descent direction ends its round as stalled (it had read
    as centred), and a round whose gap does not fall returns the best round's answer: the
    ray's path stops at t = 1e6 with the gap 1e-6 of the last sound round, in a few dozen
    Newton systems (t had grown to overflow). The control: never lost, the same path
    reaches the tolerance."""
    gap = lambda x, t: 1.0 - x[0]  # noqa: E731
    lost = _Ray(lost_at=1e7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, t = spectral_nuclear.follow_central_path(np.array([0.0]), lost, 1.0, 1.0, gap, 1e-12)
    assert t == 1e6 and gap(x, t) == pytest.approx(1e-6, rel=1e-3) and lost.calls < 100
    x, t = spectral_nuclear.follow_central_path(np.array([0.0]), _Ray(np.inf), 1.0, 1.0, gap, 1e-12)
    assert gap(x, t) <= 1e-12
