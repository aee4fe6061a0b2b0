"""The m-dimensional dual solvers (attnbias.svm.dual_solves) on their own: the l_p
solver's answer meets stationarity, feasibility and slackness directly (the module's
claim), for p near 1 and large p; the Frobenius one is max_margin's W_mm; infeasible rows
are refused; a budget too small to converge raises instead of answering."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.svm import dual_solves


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
    """With no Newton steps and a one-step L-BFGS-B the solver reports, not answers; the
    control: the default budget answers the same problem."""
    M = _rows(4, m=20, D=40)
    dual_solves.lp_norm(M, 3.0)
    monkeypatch.setattr(dual_solves, "NEWTON_ITERATIONS", 0)
    monkeypatch.setattr(dual_solves, "LBFGS_ITERATIONS", 1)
    with pytest.raises(dual_solves.DualSolveError, match="stalled|settle|active"):
        dual_solves.lp_norm(M, 3.0)
