"""The m-dimensional dual solvers (attnbias.svm.dual_solves) on their own: the l_p
solver's answer meets stationarity, feasibility and slackness directly (the module's
claim), for p near 1 and large p; its two routes (the projected Newton method for small
problems, L-BFGS-B for large ones or where Newton fails) give the same answer, at fig2's
u-SVM size also the cvxpy reference's; the Frobenius one is max_margin's W_mm; infeasible
rows are refused; a budget too small to converge raises instead of answering."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import dual_solves, norms


def _rows(seed: int, m: int = 12, D: int = 30) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((m, D))


def _kkt(M, v, lam, p):
    """The l_p SVM's conditions on (v, lambda): margins >= 1, lambda >= 0, slackness, and
    v = |G|^(q-1) sign(G) up to scale, measured as Hoelder's equality <G, v> = ||G||_q ||v||_p."""
    q = p / (p - 1.0)
    G = M.T @ lam
    margins = M @ v
    hoelder = abs(G @ v - np.linalg.norm(G, q) * np.linalg.norm(v, p)) / (G @ v)
    return {
        "primal": max(0.0, 1 - margins.min()),
        "sign": max(0.0, -lam.min()),
        "slackness": np.max(np.abs(lam * (margins - 1))) / lam.sum(),
        "hoelder": hoelder,
    }


@pytest.mark.parametrize("p", [1.05, 1.5, 2.0, 3.0, 8.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_lp_solution_meets_its_conditions(seed, p):
    M = _rows(seed)
    v, lam = dual_solves.lp_norm(M, p)
    violations = _kkt(M, v, lam, p)
    assert max(violations.values()) < 1e-8, violations


def test_the_conditions_catch_a_wrong_answer():
    """The control: the l3 solution checked as an l1.5 one, and a moved solution, fail."""
    M = _rows(0)
    v, lam = dual_solves.lp_norm(M, 3.0)
    assert _kkt(M, v, lam, 1.5)["hoelder"] > 1e-3
    assert max(_kkt(M, 1.01 * v, lam, 3.0).values()) > 1e-3


def test_p_two_is_the_frobenius_svm():
    M = _rows(2)
    v2, _ = dual_solves.lp_norm(M, 2.0)
    vf, _ = dual_solves.frobenius(M)
    assert np.linalg.norm(v2 - vf) < 1e-8 * np.linalg.norm(vf)


def test_infeasible_rows_are_refused():
    """A row and its negative: no v has both margins at 1."""
    M = _rows(3, m=4)
    M = np.vstack([M, -M[:1]])
    with pytest.raises(dual_solves.InfeasibleConstraints):
        dual_solves.frobenius(M)
    with pytest.raises(dual_solves.InfeasibleConstraints):
        dual_solves.lp_norm(M, 3.0)


def test_an_exhausted_budget_raises(monkeypatch):
    """With no Newton steps (projected or polishing) and a one-step L-BFGS-B the solver
    reports, not answers; the control: the default budget answers the same problem."""
    M = _rows(4, m=20, D=40)
    dual_solves.lp_norm(M, 3.0)
    monkeypatch.setattr(dual_solves, "NEWTON_ITERATIONS", 0)
    monkeypatch.setattr(dual_solves, "PROJECTED_NEWTON_ITERATIONS", 0)
    monkeypatch.setattr(dual_solves, "LBFGS_ITERATIONS", 1)
    with pytest.raises(dual_solves.DualSolveError, match="stalled|settle|active"):
        dual_solves.lp_norm(M, 3.0)


def _u_rows_at_fig2_size(seed: int) -> np.ndarray:
    """The u-SVM's rows of an Example-1 dataset at fig2's size (n=20, T=5, d=100)."""
    data = models.example1(np.random.default_rng(seed), n=20, T=5, d=100)
    return norms.u_rows(data["X"], data["y"], data["opt"])


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def _lbfgs_refused(*args):
    raise AssertionError("L-BFGS-B called")


@pytest.mark.parametrize("p", [1.5, 3.0])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_newton_route_is_the_lbfgs_route_at_fig2_size(seed, p, monkeypatch):
    """The u-SVM at fig2's size by the projected Newton method alone (L-BFGS-B refused)
    and by L-BFGS-B alone (the route of large problems: NEWTON_SIZE 0): one answer; the
    control: a moved answer is far from it."""
    M = _u_rows_at_fig2_size(seed)
    with monkeypatch.context() as patched:
        patched.setattr(dual_solves, "_lbfgs", _lbfgs_refused)
        v, lam = dual_solves.lp_norm(M, p)
    with monkeypatch.context() as patched:
        patched.setattr(dual_solves, "NEWTON_SIZE", 0)
        patched.setattr(dual_solves, "_projected_newton", _lbfgs_refused)
        v_old, lam_old = dual_solves.lp_norm(M, p)
    assert max(_kkt(M, v, lam, p).values()) < 1e-8
    # both polishes stop with the support's margins 1e-9 from 1 (NEWTON_TOLERANCE / 100),
    # and lambda follows them less sharply (p = 1.5, seed 1: v 6e-10 apart, lambda 2e-7)
    assert _relative(v, v_old) < 1e-8 and _relative(lam, lam_old) < 1e-6
    assert _relative(1.001 * v, v_old) > 1e-4


def test_the_u_svm_at_fig2_size_is_the_cvxpy_reference():
    """The l3 u-SVM of svm.norms (the Newton route) against cvxpy + Clarabel on the same
    data: the same optimum to the reference's accuracy; the control: l1.5's is not it."""
    pytest.importorskip("cvxpy")
    data = models.example1(np.random.default_rng(5), n=20, T=5, d=100)
    X, y, opt = data["X"], data["y"], data["opt"]
    ours = norms.solve_u_svm_norm(X, y, opt, "l3")
    reference = norms.solve_svm_norm_reference(X, opt, "l3", y=y)
    assert abs(ours.value - reference.value) < 1e-7 * reference.value
    assert _relative(ours.solution, reference.solution) < 1e-4
    other = norms.solve_u_svm_norm(X, y, opt, "l1.5")
    assert _relative(other.solution / np.abs(other.solution).max(),
                     reference.solution / np.abs(reference.solution).max()) > 1e-2  # fmt: skip


def test_a_failed_newton_route_falls_back_to_lbfgs(monkeypatch):
    """No projected Newton steps: L-BFGS-B's route answers alike."""
    M = _u_rows_at_fig2_size(4)
    v, lam = dual_solves.lp_norm(M, 3.0)
    monkeypatch.setattr(dual_solves, "PROJECTED_NEWTON_ITERATIONS", 0)
    v_fallback, _ = dual_solves.lp_norm(M, 3.0)
    assert _relative(v_fallback, v) < 1e-8


def test_a_large_problem_takes_lbfgs(monkeypatch):
    """m^2 D above NEWTON_SIZE (the W-SVM's): no projected Newton step is tried; the
    control: the same rows under the size do try it."""
    M = _rows(5, m=40, D=700)
    assert len(M) ** 2 * M.shape[1] > dual_solves.NEWTON_SIZE
    monkeypatch.setattr(dual_solves, "_projected_newton", _lbfgs_refused)
    v, lam = dual_solves.lp_norm(M, 3.0)
    assert max(_kkt(M, v, lam, 3.0).values()) < 1e-8
    monkeypatch.setattr(dual_solves, "NEWTON_SIZE", len(M) ** 2 * M.shape[1])
    with pytest.raises(AssertionError, match="called"):
        dual_solves.lp_norm(M, 3.0)
