"""W-SVM and u-SVM: the Gram-space solver against cvxpy, KKT conditions, closed forms,
infeasible and degenerate problems."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import max_margin

cp = pytest.importorskip("cvxpy")

# A tight interior-point reference: CLARABEL's default tolerances (1e-8) leave the reference
# itself up to ~1e-6 off; at 1e-10 it agrees with the exact solution to ~1e-10.
CVX_OPTS = dict(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)


def rel_err(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def w_constraints_by_loop(X, opt):
    """a_k = x_{i,opt} - x_{i,t}, b_k = x_{i,1}, i-major and t ascending (independent of svm)."""
    a, b = [], []
    for i in range(X.shape[0]):
        for t in range(X.shape[1]):
            if t != opt[i]:
                a.append(X[i, opt[i]] - X[i, t])
                b.append(X[i, 0])
    return np.array(a), np.array(b)


def check_w_kkt(X, opt, sol):
    a, b = w_constraints_by_loop(X, opt)
    W = sol.W
    margins = np.array([ak @ W @ bk for ak, bk in zip(a, b, strict=True)])
    np.testing.assert_allclose(sol.margins, margins, rtol=0, atol=1e-12)
    # primal feasibility
    assert margins.min() >= 1 - 1e-9
    # dual feasibility
    assert sol.dual.shape == (len(a),)
    assert np.all(sol.dual >= 0)
    # stationarity: W = sum_k lambda_k a_k b_k^T
    W_dual = sum(lam * np.outer(ak, bk) for lam, ak, bk in zip(sol.dual, a, b, strict=True))
    assert rel_err(W, W_dual) < 1e-12
    # complementary slackness, relative to the largest dual variable
    assert np.max(np.abs(sol.dual * (margins - 1))) <= 1e-9 * sol.dual.max()
    # some constraint is active, and the support count is consistent with the duals
    assert margins.min() <= 1 + 1e-9
    assert sol.n_support == int(np.count_nonzero(sol.dual > 1e-9 * sol.dual.max()))
    assert 1 <= sol.n_support <= len(a)
    assert 0 <= sol.kkt_residual < 1e-9


def check_u_kkt(X, y, opt, sol):
    z = np.array([y[i] * X[i, opt[i]] for i in range(len(y))])
    margins = z @ sol.u
    np.testing.assert_allclose(sol.margins, margins, rtol=0, atol=1e-12)
    assert margins.min() >= 1 - 1e-9
    assert np.all(sol.dual >= 0)
    assert rel_err(sol.u, z.T @ sol.dual) < 1e-12
    assert np.max(np.abs(sol.dual * (margins - 1))) <= 1e-9 * sol.dual.max()
    assert 0 <= sol.kkt_residual < 1e-9


EXAMPLE1_CASES = [
    (seed, dict(n=8, T=4, d=12, noise_orthogonal_to_u=orth))
    for orth in (True, False)
    for seed in (0, 1, 2)
] + [(0, dict(n=6, T=3, d=5, noise_orthogonal_to_u=False))]


@pytest.mark.parametrize(("seed", "params"), EXAMPLE1_CASES)
def test_w_svm_matches_cvxpy_and_kkt(seed, params):
    ds = models.generate("example1", seed, params)
    sol = max_margin.solve_w_svm(ds["X"], ds["opt"], name="ex1")
    W_ref = max_margin.solve_w_svm_cvxpy(ds["X"], ds["opt"], **CVX_OPTS)
    assert sol.W.shape == (params["d"], params["d"])
    assert rel_err(sol.W, W_ref) < 1e-6
    check_w_kkt(ds["X"], ds["opt"], sol)


def test_w_svm_matches_default_cvxpy_solver():
    ds = models.generate("example1", 3, dict(n=8, T=4, d=12))
    sol = max_margin.solve_w_svm(ds["X"], ds["opt"])
    assert rel_err(sol.W, max_margin.solve_w_svm_cvxpy(ds["X"], ds["opt"])) < 1e-6


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_w_svm_on_dm_data(seed):
    ds = models.generate("dm", seed, dict(n=8, T=4, d=12))
    sol = max_margin.solve_w_svm(ds["X"], ds["opt"])
    assert rel_err(sol.W, max_margin.solve_w_svm_cvxpy(ds["X"], ds["opt"], **CVX_OPTS)) < 1e-6
    check_w_kkt(ds["X"], ds["opt"], sol)


@pytest.mark.parametrize(("seed", "n", "d"), [(0, 8, 12), (1, 8, 12), (2, 10, 6), (3, 5, 20)])
def test_u_svm_matches_cvxpy_and_kkt(seed, n, d):
    ds = models.generate("dm", seed, dict(n=n, T=4, d=d))
    sol = max_margin.solve_u_svm(ds["X"], ds["y"], ds["opt"], name="dm")
    u_ref = max_margin.solve_u_svm_cvxpy(ds["X"], ds["y"], ds["opt"], **CVX_OPTS)
    assert sol.u.shape == (d,)
    assert rel_err(sol.u, u_ref) < 1e-6
    check_u_kkt(ds["X"], ds["y"], ds["opt"], sol)


@pytest.mark.parametrize("d", [2, 5])
def test_two_token_closed_form(d):
    ds = models.generate("two_token", 0, {"d": d})
    x1, x2 = ds["X"][0, 0], ds["X"][0, 1]
    expected = np.outer(x1 - x2, x1) / (np.sum((x1 - x2) ** 2) * np.sum(x1**2))
    sol = max_margin.solve_w_svm(ds["X"], ds["opt"])
    np.testing.assert_allclose(sol.W, expected, rtol=0, atol=1e-14)
    assert sol.n_support == 1
    np.testing.assert_allclose(sol.margins, [1.0], rtol=0, atol=1e-14)


def test_two_token_default_params():
    ds = models.generate("two_token", 0, {})
    np.testing.assert_allclose(
        max_margin.solve_w_svm(ds["X"], ds["opt"]).W, [[0.5, 0.0], [-0.5, 0.0]], rtol=0, atol=1e-14
    )


def _contradictory_w():
    """Two sequences with identical tokens but different optimal tokens: infeasible."""
    rng = np.random.default_rng(0)
    seq = rng.standard_normal((3, 8))
    return np.stack([seq, seq]), np.array([1, 2])


def test_infeasible_w_svm_names_dataset_and_sizes():
    X, opt = _contradictory_w()
    with pytest.raises(max_margin.InfeasibleSVMError) as info:
        max_margin.solve_w_svm(X, opt, name="my-contradictory-set")
    msg = str(info.value)
    for part in ("my-contradictory-set", "n=2", "T=3", "d=8"):
        assert part in msg, (part, msg)
    # the reference agrees that it is infeasible
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(max_margin.InfeasibleSVMError):
            max_margin.solve_w_svm_cvxpy(X, opt, solver="CLARABEL")


def test_infeasible_u_svm_names_dataset_and_sizes():
    rng = np.random.default_rng(1)
    seq = rng.standard_normal((3, 7))
    X = np.stack([seq, seq])  # same optimal token (index 0), opposite labels
    y = np.array([1.0, -1.0])
    opt = np.array([0, 0])
    with pytest.raises(max_margin.InfeasibleSVMError) as info:
        max_margin.solve_u_svm(X, y, opt, name="opposite-labels")
    msg = str(info.value)
    # T plays no role in the u-SVM and the message leaves it out; name, n and d are there.
    for part in ("opposite-labels", "n=2", "d=7"):
        assert part in msg, (part, msg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(max_margin.InfeasibleSVMError):
            max_margin.solve_u_svm_cvxpy(X, y, opt, solver="CLARABEL")


def test_infeasible_query_token_zero():
    """A zero query token makes every constraint of its sequence 0 >= 1."""
    X = np.random.default_rng(2).standard_normal((2, 3, 4))
    X[1, 0] = 0.0
    with pytest.raises(max_margin.InfeasibleSVMError, match="zero-query"):
        max_margin.solve_w_svm(X, np.array([1, 2]), name="zero-query")


def test_feasibility_agrees_with_cvxpy_when_d_is_small():
    """d too small for n and T: our solver is infeasible exactly where cvxpy is."""
    outcomes = []
    for d, n in [(1, 40), (1, 8), (2, 4), (2, 8), (3, 16), (4, 16), (3, 4)]:
        ds = models.generate("example1", 1, dict(n=n, T=4, d=d, noise_orthogonal_to_u=False))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                W_ref = max_margin.solve_w_svm_cvxpy(ds["X"], ds["opt"], **CVX_OPTS)
            except max_margin.InfeasibleSVMError:
                W_ref = None
        if W_ref is None:
            with pytest.raises(max_margin.InfeasibleSVMError, match=f"n={n}, T=4, d={d}"):
                max_margin.solve_w_svm(ds["X"], ds["opt"], name="small-d")
        else:
            sol = max_margin.solve_w_svm(ds["X"], ds["opt"])
            assert rel_err(sol.W, W_ref) < 1e-6
            check_w_kkt(ds["X"], ds["opt"], sol)
        outcomes.append(W_ref is None)
    # the grid holds both kinds, so both branches above were exercised
    assert any(outcomes) and not all(outcomes)


def test_duplicated_sequences_rank_deficient_gram():
    ds = models.generate("example1", 4, dict(n=6, T=3, d=8, noise_orthogonal_to_u=False))
    X = np.concatenate([ds["X"], ds["X"], ds["X"][:2]])
    opt = np.concatenate([ds["opt"], ds["opt"], ds["opt"][:2]])
    a, b = w_constraints_by_loop(X, opt)
    K = (a @ a.T) * (b @ b.T)
    assert np.linalg.matrix_rank(K) < K.shape[0]  # really degenerate
    sol = max_margin.solve_w_svm(X, opt)
    assert rel_err(sol.W, max_margin.solve_w_svm_cvxpy(X, opt, **CVX_OPTS)) < 1e-6
    # duplicating constraints does not change the max-margin solution
    assert rel_err(sol.W, max_margin.solve_w_svm(ds["X"], ds["opt"]).W) < 1e-10
    check_w_kkt(X, opt, sol)


def test_duplicated_samples_u_svm():
    ds = models.generate("dm", 5, dict(n=6, T=3, d=8))
    X = np.concatenate([ds["X"], ds["X"]])
    y = np.concatenate([ds["y"], ds["y"]])
    opt = np.concatenate([ds["opt"], ds["opt"]])
    sol = max_margin.solve_u_svm(X, y, opt)
    assert rel_err(sol.u, max_margin.solve_u_svm_cvxpy(X, y, opt, **CVX_OPTS)) < 1e-6
    assert rel_err(sol.u, max_margin.solve_u_svm(ds["X"], ds["y"], ds["opt"]).u) < 1e-10
    check_u_kkt(X, y, opt, sol)


def test_duplicated_token_within_sequence():
    """Two identical non-optimal tokens give two identical constraints."""
    ds = models.generate("example1", 6, dict(n=5, T=4, d=10, noise_orthogonal_to_u=False))
    X = ds["X"].copy()
    for i in range(X.shape[0]):
        others = [t for t in range(1, 4) if t != ds["opt"][i]]
        X[i, others[1]] = X[i, others[0]]
    sol = max_margin.solve_w_svm(X, ds["opt"])
    assert rel_err(sol.W, max_margin.solve_w_svm_cvxpy(X, ds["opt"], **CVX_OPTS)) < 1e-6
    check_w_kkt(X, ds["opt"], sol)


def test_w_svm_solution_is_minimal_among_feasible_points():
    """Independent of cvxpy: W_mm is no longer than a feasible perturbation of it."""
    ds = models.generate("example1", 7, dict(n=6, T=3, d=8, noise_orthogonal_to_u=False))
    sol = max_margin.solve_w_svm(ds["X"], ds["opt"])
    a, b = w_constraints_by_loop(ds["X"], ds["opt"])
    rng = np.random.default_rng(0)
    for _ in range(20):
        W = sol.W + 1e-3 * rng.standard_normal(sol.W.shape)
        margins = np.einsum("kd,de,ke->k", a, W, b)
        W = W / margins.min()  # scale onto the feasible set
        assert np.linalg.norm(W) >= np.linalg.norm(sol.W) - 1e-12


@pytest.mark.parametrize("scale", [1e-5, 1e-3, 1e-2, 0.1, 10.0, 1e3])
def test_w_svm_scale_covariance(scale):
    """Tokens scaled by s: every constraint scales by s^2, so W_mm scales by 1/s^2."""
    ds = models.generate("example1", 0, dict(n=8, T=4, d=12, noise_orthogonal_to_u=False))
    base = max_margin.solve_w_svm(ds["X"], ds["opt"]).W
    sol = max_margin.solve_w_svm(ds["X"] * scale, ds["opt"])
    assert rel_err(sol.W * scale**2, base) < 1e-9
    assert sol.margins.min() >= 1 - 1e-9
