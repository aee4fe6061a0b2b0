"""svm.max_simplex: the max-norm u-SVM's LP by the dense bounded simplex, against the
LP's conditions, the interior-point method of svm.max_norm and cvxpy; its final basis's
check; a pivot budget that runs out falls back with a logged line."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import max_norm, max_simplex, norms
from attnbias.svm.dual_solves import DualSolveError, InfeasibleConstraints

pytest.importorskip("cvxpy")


@pytest.fixture(scope="module")
def dm():
    return models.generate("dm", 1, dict(n=10, T=4, d=40, mu_norm=1.0, noise_scale=0.5))


def test_the_simplex_meets_the_lp_conditions_and_the_interior_point_value():
    """Dense random rows: the simplex's (u, lambda) meets margins >= 1, slackness and
    Hoelder's equality <G, u> = ||G||_1 ||u||_max, with the interior-point method's value
    (an independent solver of the same LP); the control: u moved off fails."""
    M = np.random.default_rng(7).standard_normal((15, 40))
    u, lam = max_norm.u_svm(M)
    assert np.all(lam >= -1e-12 * lam.sum()) and lam.sum() > 0  # zeros to rounding

    def violation(u):
        u = u / (M @ u).min()
        G, margins = M.T @ lam, M @ u
        slackness = np.max(np.abs(lam * (margins - 1))) / lam.sum()
        return max(slackness, abs(G @ u - np.abs(G).sum() * np.abs(u).max()) / (G @ u))

    assert violation(u) < 1e-12
    assert np.abs(u).max() == pytest.approx(np.abs(max_norm.svm(max_norm.DenseRows(M))[0]).max(),
                                            rel=1e-9)  # fmt: skip
    assert violation(u + 1e-3 * np.random.default_rng(0).standard_normal(u.shape)) > 1e-5


def test_the_simplex_refuses_contradicting_rows_by_the_gram_dual():
    """A row and its negative: the simplex's margin is 0 and the Gram dual proves the rows
    infeasible; the control: the rows without the negated one solve."""
    M = np.random.default_rng(3).standard_normal((4, 6))
    assert np.all(M @ max_norm.u_svm(M)[0] >= 1 - 1e-12)
    with pytest.raises(InfeasibleConstraints):
        max_norm.u_svm(np.vstack([M, -M[:1]]))


def test_the_final_basis_is_checked(dm):
    """The answer is recomputed from the final basis and checked there: the starting basis
    of a real instance (w = the signs of Z^T 1, gamma and the other rows' slacks basic) is
    feasible but not optimal and fails the dual check; the control: the simplex's own
    answer, the reference's optimum."""
    z = norms._u_rows(dm["X"], dm["y"], dm["opt"])
    m, d = z.shape
    A = np.hstack([z, -np.ones((m, 1)), -np.eye(m)])
    lower = np.concatenate([-np.ones(d), [-np.inf], np.zeros(m)])
    upper = np.concatenate([np.ones(d), [np.inf], np.full(m, np.inf)])
    w = np.where(z.sum(axis=0) >= 0, 1.0, -1.0)
    k = int(np.argmin(z @ w))
    x = np.concatenate([w, [(z @ w)[k]], z @ w - (z @ w)[k]])
    basis = np.arange(d + 1, d + 1 + m)
    basis[k] = d
    direction = np.concatenate([-w, np.zeros(1 + m)])
    direction[d + 1 + k] = 1.0
    scale = np.abs(z).max()
    with pytest.raises(DualSolveError, match="final basis fails its check .primal 0, dual"):
        max_simplex._basic_solution(A, basis, direction, x, lower, upper, d, scale)
    w_opt, gamma, _ = max_simplex.simplex_svm(z)
    reference = norms.solve_svm_norm_reference(dm["X"], dm["opt"], "max", y=dm["y"])
    assert 1.0 / gamma == pytest.approx(reference.value, rel=1e-7)


def test_an_exhausted_simplex_falls_back_with_a_logged_line(dm, monkeypatch, caplog):
    """Five pivots are not enough: the simplex says so, the u-SVM is cvxpy's with a line
    naming the dataset; the control: the default budget answers without one."""
    X, y, opt = dm["X"], dm["y"], dm["opt"]
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        norms.solve_u_svm_norm(X, y, opt, "max", name="experiment dm, seed 3")
    assert not caplog.records
    z = norms._u_rows(X, y, opt)
    monkeypatch.setattr(max_simplex, "PIVOTS_PER_VARIABLE", 5 / (z.shape[1] + 1 + len(z)))
    with pytest.raises(DualSolveError, match="did not finish in 5 pivots"):
        max_simplex.simplex_svm(z)
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        s = norms.solve_u_svm_norm(X, y, opt, "max", name="experiment dm, seed 3")
    assert norms.optimality_defect(s, X, opt, "max", y=y) is None
    (line,) = [r.getMessage() for r in caplog.records]
    for part in ("u-SVM in the max norm for experiment dm, seed 3", "did not finish"):
        assert part in line, (part, line)
