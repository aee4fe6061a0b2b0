"""svm.max_simplex: the max-norm u-SVM's LP by the dense bounded simplex, against the
LP's conditions, the interior-point method of svm.max_norm and cvxpy; its final basis's
check; a pivot budget that runs out falls back with a logged line; the compiled pivots
(_max_simplex.c) against numpy's, step for step, and numpy's where no compiler builds them."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from attnbias.data import models
from attnbias.svm import max_margin, max_norm, max_simplex, norms
from attnbias.svm.dual_solves import DualSolveError, InfeasibleConstraints

pytest.importorskip("cvxpy")
ROOT = Path(__file__).resolve().parents[2]


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
    z = norms.u_rows(dm["X"], dm["y"], dm["opt"])
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
    assert not _logged_lines(dm, caplog)
    z = norms.u_rows(dm["X"], dm["y"], dm["opt"])
    monkeypatch.setattr(max_simplex, "PIVOTS_PER_VARIABLE", 5 / (z.shape[1] + 1 + len(z)))
    with pytest.raises(DualSolveError, match="did not finish in 5 pivots"):
        max_simplex.simplex_svm(z)
    (line,) = _logged_lines(dm, caplog)
    for part in ("u-SVM in the max norm for experiment dm, seed 3", "did not finish"):
        assert part in line, (part, line)


def _logged_lines(dm, caplog) -> list[str]:
    """The lines logged while the u-SVM of `dm` is solved as "experiment dm, seed 3"; its
    answer, whichever solver gave it, passes the KKT check."""
    X, y, opt = dm["X"], dm["y"], dm["opt"]
    caplog.clear()
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        s = norms.solve_u_svm_norm(X, y, opt, "max", name="experiment dm, seed 3")
    assert norms.optimality_defect(s, X, opt, "max", y=y) is None
    return [r.getMessage() for r in caplog.records]


# ---------------------------------------- the compiled pivots (_max_simplex.c) against numpy's

needs_cc = pytest.mark.skipif(max_simplex.compiled_pivots() is None, reason="no C compiler")


@pytest.fixture(params=["c", "numpy"])
def pivots(request, monkeypatch):
    """Every u-SVM of the test by the compiled pivots, or by numpy's (the fallback)."""
    if request.param == "c" and max_simplex.compiled_pivots() is None:
        pytest.skip("no C compiler")
    if request.param == "numpy":
        monkeypatch.setattr(max_simplex, "_PIVOTS", False)
    return request.param


def _feasible_rows(seed: int, m: int, d: int) -> np.ndarray:
    """Gaussian rows turned to meet <z_k, u0> >= 0.1 for a random u0: a positive margin."""
    rng = np.random.default_rng(seed)
    Z, u0 = rng.standard_normal((m, d)), rng.standard_normal(d)
    Z *= np.where(Z @ u0 >= 0, 1.0, -1.0)[:, None]
    low = Z @ u0 < 0.1
    Z[low] += ((0.1 - Z[low] @ u0) / (u0 @ u0))[:, None] * u0
    return Z


def _cvxpy_value(Z: np.ndarray) -> float:
    """min ||u||_max s.t. Z u >= 1 by cvxpy and Clarabel (the independent reference)."""
    import cvxpy as cp

    u = cp.Variable(Z.shape[1])
    problem = cp.Problem(cp.Minimize(cp.norm(u, "inf")), [Z @ u >= 1])
    problem.solve(solver=cp.CLARABEL)
    return float(problem.value)


def _steps(Z: np.ndarray, run):
    """The simplex's state after its pivots by `run` (_numpy_pivots or _compiled_pivots)."""
    tableau = max_simplex._start(Z)
    steps = run(tableau, round(max_simplex.PIVOTS_PER_VARIABLE * tableau.A.shape[1]))
    return steps, tableau


@needs_cc
@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), m=st.integers(1, 25), d=st.integers(1, 60))
def test_the_compiled_pivots_are_numpys_step_for_step(seed, m, d):
    """Random feasible rows of every shape from one row to more rows than columns: the C
    loop takes numpy's steps (the same count, final basis and point) and the answer is
    the one cvxpy's value; the control: numpy's pivots stopped a step early end elsewhere."""
    Z = _feasible_rows(seed, m, d)
    steps_c, c = _steps(Z, max_simplex._compiled_pivots)
    steps_numpy, numpy = _steps(Z, max_simplex._numpy_pivots)
    assert steps_c == steps_numpy is not None
    assert np.array_equal(c.basis, numpy.basis) and np.array_equal(c.direction, numpy.direction)
    np.testing.assert_allclose(c.x, numpy.x, rtol=0, atol=1e-12 * (1 + np.abs(numpy.x).max()))
    w, gamma, y = max_simplex.simplex_svm(Z, "c")
    assert 1.0 / gamma == pytest.approx(_cvxpy_value(Z), rel=1e-6)
    assert np.all(y >= -1e-12) and y.sum() == pytest.approx(1.0)  # zeros to rounding
    if steps_numpy > 0:
        early = max_simplex._numpy_pivots(max_simplex._start(Z), steps_numpy - 1)
        assert early is None


@pytest.mark.parametrize("experiment", ["fig2", "geometry_dm"])
@pytest.mark.parametrize("seed", [1, 2])
def test_fig2_and_dm_sized_u_svms_are_the_references(experiment, seed, pivots):
    """The config's fig2 and geometry_dm data (n = 20, d = 100): the u-SVM by either
    pivots passes the KKT check with cvxpy's value; the compiled and numpy answers are one."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    data = config["experiments"][experiment]["data"]
    instance = models.generate(data["model"], seed, data["params"])
    X, y, opt = instance["X"], instance["y"], instance["opt"]
    s = norms.solve_u_svm_norm(X, y, opt, "max", name=experiment)
    assert norms.optimality_defect(s, X, opt, "max", y=y) is None
    reference = norms.solve_svm_norm_reference(X, opt, "max", y=y)
    assert s.value == pytest.approx(reference.value, rel=1e-7)
    z = norms.u_rows(X, y, opt)
    ours = max_simplex.simplex_svm(z, pivots)
    numpy = max_simplex.simplex_svm(z, "numpy")
    np.testing.assert_allclose(ours[0], numpy[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours[2], numpy[2], rtol=0, atol=1e-12)


def test_contradicting_and_zero_rows_are_refused_by_either_pivots(pivots):
    """A row and its negative: InfeasibleConstraints (the simplex's margin 0, then the Gram
    dual); a zero row: its margin can reach no more than 0, refused the same way; the
    control: the rows alone solve."""
    M = np.random.default_rng(3).standard_normal((4, 6))
    assert np.all(M @ max_norm.u_svm(M)[0] >= 1 - 1e-12)
    for bad in (np.vstack([M, -M[:1]]), np.vstack([M, np.zeros((1, 6))])):
        with pytest.raises(InfeasibleConstraints):
            max_norm.u_svm(bad)


def test_a_degenerate_token_set_is_refused_naming_it(dm, pivots):
    """A zero optimal token: a zero row of the u-SVM, refused before any pivot, naming the
    dataset and the sample; the control: the data as drawn solves."""
    X, y, opt = dm["X"].copy(), dm["y"], dm["opt"]
    assert norms.solve_u_svm_norm(X, y, opt, "max").value > 0
    X[2, opt[2]] = 0.0
    with pytest.raises(max_margin.InfeasibleSVMError, match="experiment dm.*degenerate.*sample 2"):
        norms.solve_u_svm_norm(X, y, opt, "max", name="experiment dm, seed 5")


@needs_cc
def test_a_compiled_answer_that_fails_its_check_falls_back_with_a_logged_line(dm, monkeypatch,
                                                                               caplog):  # fmt: skip
    """The C pricing told that every step is too small to take (OPTIMAL huge): it stops at
    the start, whose basis fails the dual check, and the u-SVM is cvxpy's with a line
    naming the dataset and why; the control (the default) logs nothing."""
    assert not _logged_lines(dm, caplog)
    monkeypatch.setattr(max_simplex, "OPTIMAL", 1e6)
    (line,) = _logged_lines(dm, caplog)
    for part in ("u-SVM in the max norm for experiment dm, seed 3", "final basis fails"):
        assert part in line, (part, line)


def test_no_compiler_pivots_in_numpy_with_one_logged_line(dm, tmp_path, monkeypatch, caplog):
    """$CC names no compiler (and the cache is empty): the simplex pivots in numpy, says so
    once with the reason, and answers as the compiled pivots do; the control: with a
    compiler, no line."""
    z = norms.u_rows(dm["X"], dm["y"], dm["opt"])
    monkeypatch.setenv("ATTNBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    monkeypatch.setattr(max_simplex, "_PIVOTS", None)
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        first = max_simplex.simplex_svm(z)
        max_simplex.simplex_svm(z)
    (line,) = [r.getMessage() for r in caplog.records]
    assert "pivots in numpy" in line and "no-such-compiler" in line, line
    assert max_simplex.compiled_pivots() is None
    if shutil.which("cc") or shutil.which("gcc"):
        monkeypatch.delenv("CC")
        monkeypatch.setattr(max_simplex, "_PIVOTS", None)
        caplog.clear()
        with caplog.at_level("WARNING", logger="attnbias.svm"):
            compiled = max_simplex.simplex_svm(z)
        assert not caplog.records and max_simplex.compiled_pivots() is not None
        np.testing.assert_allclose(compiled[0], first[0], rtol=0, atol=1e-12)
