"""svm.spectral_face: the spectral norm's canonical point by the barrier method, against
cvxpy + Clarabel's on random and real instances."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import canonical, norms, spectral_face, spectral_nuclear
from attnbias.svm.norm_values import parse_norm
from attnbias.svm.norms import w_rows

cp = pytest.importorskip("cvxpy")

INSTANCES = {
    "example1 n6 T3 d5": models.example1(np.random.default_rng(3), n=6, T=3, d=5),
    "example1 n8 T4 d30": models.example1(np.random.default_rng(5), n=8, T=4, d=30),
    "dm n10 T4 d40": models.data_model_dm(
        np.random.default_rng(7), n=10, T=4, d=40, mu_norm=1.0, noise_scale=0.5
    ),
}


@pytest.fixture(scope="module", params=sorted(INSTANCES))
def solved(request):
    data = INSTANCES[request.param]
    X, opt = data["X"], data["opt"]
    return X, opt, norms.solve_w_svm_norm(X, opt, "spectral", name=request.param)


def test_objective_hessian_shift_inverts_the_shifted_hessian():
    """_spectral_hessian_inverse with q inverts Hf + q I (the canonical point's 2 t I), and
    _gram_in_inverse with q is <A_k, (Hf + q I)^-1 A_l>. The control: without q it does not."""
    rng = np.random.default_rng(4)
    C = rng.standard_normal((7, 4))
    C *= 0.9 / np.linalg.norm(C, 2)
    D, q = rng.standard_normal((7, 4)), 3.7
    Sinv = np.linalg.inv(np.eye(4) - C.T @ C)
    H = 2 * D @ Sinv + 2 * C @ Sinv @ (D.T @ C + C.T @ D) @ Sinv + q * D
    U, sigma, Vt = np.linalg.svd(C, full_matrices=True)
    s = 1.0 / (1.0 - sigma**2)
    shifted = spectral_nuclear._spectral_hessian_inverse(U, sigma, s, Vt.T, q)
    assert np.abs(shifted(H[None])[0] - D).max() < 1e-10
    plain = spectral_nuclear._spectral_hessian_inverse(U, sigma, s, Vt.T)
    assert np.abs(plain(H[None])[0] - D).max() > 1e-2
    a, b = rng.standard_normal((9, 7)), rng.standard_normal((9, 4))
    problem = spectral_nuclear.SpectralPrimal(a, b)
    Cr = problem.Ua.T @ C @ problem.Ub
    Ur, sr, Vr = np.linalg.svd(Cr, full_matrices=True)
    inv = spectral_nuclear._spectral_hessian_inverse(Ur, sr, 1 / (1 - sr**2), Vr.T, q)
    Y = inv(problem.ca[:, :, None] * problem.cb[:, None, :])
    direct = np.einsum("ki,lij,kj->kl", problem.ca, Y, problem.cb)
    fast = problem._gram_in_inverse(Ur, sr, 1 / (1 - sr**2), Vr.T, q)
    assert np.abs(direct - fast).max() < 1e-10 * np.abs(direct).max()


def test_newton_step_solves_the_finite_difference_system():
    """The point's gradient is its barrier's and the step solves the system of the
    gradient's finite-difference Hessian. The control: the step at another t is not it."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((12, 6))
    b = rng.standard_normal((12, 3)) @ rng.standard_normal((3, 6))
    problem = spectral_face._Face(a, b, 2.0)
    Y = rng.standard_normal(problem.shape)
    Y *= 0.5 / np.linalg.norm(Y, 2)
    problem.low = problem.margins(Y).min() - 1.0  # every slack at least 1
    x, t, eps = Y.ravel(), 3.0, 1e-6
    gradient, step = problem.newton(x, t)
    E = np.eye(len(x)) * eps
    numeric = np.array([(problem.barrier(x + e, t) - problem.barrier(x - e, t)) / (2 * eps)
                        for e in E])  # fmt: skip
    assert np.abs(gradient - numeric).max() < 1e-6 * np.abs(gradient).max()
    hessian = np.array([(problem.newton(x + e, t)[0] - problem.newton(x - e, t)[0]) / (2 * eps)
                        for e in E])  # fmt: skip
    exact = -np.linalg.solve(hessian, gradient)
    assert np.abs(step - exact).max() < 1e-6 * np.abs(step).max()
    other = problem.newton(x, 30.0)[1]
    assert np.abs(other - exact).max() > 1e-2 * np.abs(step).max()


def test_canonical_point_is_certified_and_cvxpys(solved):
    """The fast point passes the KKT check with the SVM's duals and lies within 1e-4
    (relative) of cvxpy + Clarabel's (whose relative gap 1e-8 on ||W||_F^2 bounds the
    distance only to ~1e-4; measured 2e-6 to 6e-6 at fig2's and DM's sizes), with a
    Frobenius norm no larger. The controls: the SVM's own point, another element of the
    face, is refused as the least-norm point where the face is wider (its norm larger),
    and a bound below the optimum is refused by name."""
    X, opt, s = solved
    spectral = parse_norm("spectral")
    fast = canonical.least_norm_point(X, opt, "spectral", s.value, start=s.solution)
    checked = canonical.checked_point(fast, s, X, opt, spectral, "test", None)
    reference = canonical.least_norm_point(X, opt, "spectral", s.value, fast=False)
    reference = reference / _margins(X, opt, reference).min()
    distance = np.linalg.norm(checked.solution - reference) / np.linalg.norm(reference)
    assert distance < 1e-4
    assert np.linalg.norm(checked.solution) <= np.linalg.norm(reference) * (1 + 1e-6)
    if np.linalg.norm(s.solution - reference) > 1e-3 * np.linalg.norm(reference):
        assert np.linalg.norm(s.solution) > np.linalg.norm(checked.solution) * (1 + 1e-6)
    with pytest.raises(spectral_face.DualSolveError, match="not below the bound"):
        canonical.least_norm_point(X, opt, "spectral", 0.5 * s.value, start=s.solution)


def test_fast_path_logs_nothing_and_falls_back_with_a_named_line(monkeypatch, caplog):
    """canonical() uses the barrier method without a logged line; where it fails (a Newton
    budget of 2) it falls back to cvxpy, naming the dataset, the norm and the token set,
    and answers cvxpy's point (rescaled, checked)."""
    data = INSTANCES["example1 n8 T4 d30"]
    X, opt = data["X"], data["opt"]
    s = norms.solve_w_svm_norm(X, opt, "spectral", name="toy")
    name = "experiment toy, seed 5"
    with caplog.at_level(logging.WARNING):
        canonical.canonical(s, X, opt, "spectral", name=name)
    assert not caplog.records, caplog.text
    monkeypatch.setattr(spectral_nuclear, "NEWTON_BUDGET", 2)
    with caplog.at_level(logging.WARNING):
        again = canonical.canonical(s, X, opt, "spectral", name=name)
    for part in (name, "spectral norm", "optimal tokens [", "svm.spectral_face",
                 "Newton steps", "solved by cvxpy"):  # fmt: skip
        assert part in caplog.text, (part, caplog.text)
    reference = canonical.least_norm_point(X, opt, "spectral", s.value, fast=False)
    reference = reference / _margins(X, opt, reference).min()
    assert np.abs(again.solution - reference).max() < 1e-12 * np.abs(reference).max()


def _margins(X, opt, W):
    a, b = w_rows(X, opt, None)
    return ((a @ W) * b).sum(axis=1)
