"""W-SVM and u-SVM: the Gram-space solver against cvxpy, KKT conditions, closed forms,
infeasible and degenerate problems.

Peers' printed SVM values as tests.

The notebooks of github.com/ucr-optml/max_margin_attention (commit c309c12, the code of
"Max-Margin Token Selection in Attention Mechanism", arXiv 2306.13596) print cvxopt's
iteration log for their p-SVM; its last primal cost is 1/2 ||p_mm||^2 (the QP has P = I,
q = 0). Only the data and the printed numbers are copied here, no code.

The peers' problem (p-SVM). Their model is f(X) = v^T X^T softmax(X W p): a tunable prompt
vector p attends to the tokens through a fixed key-query matrix W. Their p-SVM is

    p_mm = argmin ||p||  s.t.  (W^T (x_opt - x_t))^T p >= 1  for every example i, t != opt_i,

with tokens x_t the rows of X_i, opt_i the index they pass as `ids` and W = K^T Q built from
the key and query weights. (An example listed in `zero_ids` gets margin 0 instead of 1.)

Mapping onto our W-SVM, (x_opt - x_t)^T W x_1 >= 1 with query x_1 the first token. Every
constraint only sees differences of tokens of one example, which do not change when all of
that example's tokens are shifted by the same vector. So lift each projected token
z_t = W_peer^T x_t to R^{d+1} as x'_t = (z_t - z_1, 1): the differences are (z_opt - z_t, 0),
and the query x'_1 = e_{d+1} is the same unit vector e for every example. Our constraints
then read (z_opt - z_t)^T (W e) >= 1; only the column W e enters them, so W_mm = (p_mm, 0) e^T
and 1/2 ||W_mm||_F^2 = 1/2 ||p_mm||^2, the peers' printed value. The optimal index is theirs
unchanged (no reordering: token 1 is a constraint like any other when it is not optimal).

Cross-check through the vector solver: the p-SVM is also our u-SVM with one "example" per
constraint, token z_opt - z_t, label +1 and optimal index 0 (y u^T x_opt >= 1).

The decoder: their v-SVM (sklearn LinearSVC, no intercept, C = 1e9, returned normalised) is
y_i v^T x_{i,opt_i} >= 1, exactly our u-SVM on the raw tokens.
"""

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


def peer_tokens(rows) -> np.ndarray:
    """The peers build their data as float32 torch tensors; keep their rounding."""
    return np.asarray(rows, dtype=np.float32).astype(np.float64)


# --- Data -----------------------------------------------------------------------------------
# ucr-optml/max_margin_attention, MaxMarginTokenSelection/single_input_converge.ipynb,
# cell 1 (In [2]), data_generator with g_converge = True: one input, T = 3, d = 3.
SINGLE_X = peer_tokens([[[-0.1, 1, 1], [1, 0, 0.9], [0, 0, 0.9]]])


# Same notebook, cell 2 (In [3]): key and query weights both diag(1, 1, 0); cell 3 (In [4])
# passes W = K^T Q = diag(1, 1, 0) (the third coordinate only carries the value score).
SINGLE_W = np.diag([1.0, 1.0, 0.0])


# Cell 3 (In [4]) solves with ids [0] ("global") and then ids [1] ("local"); the outputs of
# that cell print these two final primal costs, in that order.
SINGLE_PRINTED = {0: 0.49505, 1: 0.50000}


# ucr-optml/max_margin_attention, MaxMarginTokenSelection/joint_training.ipynb, cell 1
# (In [2]), data_generator with tight_converge = True: n = 3, T = 2, d = 2.
JOINT_X = peer_tokens([[[0, 0], [1, 1]], [[0, 0], [1, -1]], [[0, 0], [0.5, 1]]])


JOINT_Y = np.array([1.0, -1.0, 1.0])


# Cell 1 (In [2]), tight_converge = False: the third example's second token is (0.5, 1.5).
JOINT_X_LOOSE = peer_tokens([[[0, 0], [1, 1]], [[0, 0], [1, -1]], [[0, 0], [0.5, 1.5]]])


# Cell 3 (In [4]): W = identity, ids [1, 1, 1] (the second token is optimal everywhere).
JOINT_OPT = np.array([1, 1, 1])


# Cell 3 (In [4]) prints two cvxopt logs: the p-SVM (final pcost 9.4444e-01), then the same
# problem with zero_ids [2], i.e. the third example at margin 0 (final pcost 5.0000e-01).
# Its v-SVM (LinearSVC) prints nothing; the plotted decoder direction is (0, 1).
JOINT_PRINTED = 0.94444


JOINT_RELAXED_PRINTED = 0.50000


JOINT_DECODER = np.array([0.0, 1.0])


# --- The mapping ----------------------------------------------------------------------------
def lifted(X: np.ndarray, W_peer: np.ndarray) -> np.ndarray:
    """x'_t = (W_peer^T x_t - W_peer^T x_1, 1): same token differences, query e_{d+1}."""
    Z = X @ W_peer  # rows z_t^T = x_t^T W_peer
    return np.concatenate([Z - Z[:, :1], np.ones(Z.shape[:2] + (1,))], axis=2)


def difference_vectors(X: np.ndarray, W_peer: np.ndarray, opt: np.ndarray) -> np.ndarray:
    """z_opt - z_t for every example and t != opt, as tokens of a one-token u-SVM."""
    Z = X @ W_peer
    return np.array(
        [Z[i, opt[i]] - Z[i, t] for i in range(len(Z)) for t in range(Z.shape[1]) if t != opt[i]]
    )


def half_sq_norm(A: np.ndarray) -> float:
    return 0.5 * float(np.sum(A**2))


def p_svm_by_w_svm(X, W_peer, opt) -> float:
    """1/2 ||p_mm||^2 through our W-SVM on the lifted tokens; checks W_mm = (p_mm, 0) e^T."""
    sol = max_margin.solve_w_svm(lifted(X, W_peer), opt)
    assert sol.kkt_residual < 1e-9
    np.testing.assert_allclose(sol.W[:, :-1], 0.0, atol=1e-12)  # only the column W e
    assert abs(sol.W[-1, -1]) < 1e-12  # and p_mm has no lifted component
    return half_sq_norm(sol.W)


def p_svm_by_u_svm(X, W_peer, opt) -> float:
    """1/2 ||p_mm||^2 through our u-SVM, one constraint vector per example."""
    D = difference_vectors(X, W_peer, opt)
    sol = max_margin.solve_u_svm(D[:, None, :], np.ones(len(D)), np.zeros(len(D), dtype=int))
    return half_sq_norm(sol.u)


# --- single_input_converge.ipynb ------------------------------------------------------------
@pytest.mark.parametrize("opt", [0, 1])
def test_single_input_p_svm_matches_printed_value(opt):
    opt_arr = np.array([opt])
    by_w = p_svm_by_w_svm(SINGLE_X, SINGLE_W, opt_arr)
    by_u = p_svm_by_u_svm(SINGLE_X, SINGLE_W, opt_arr)
    assert round(by_w, 5) == SINGLE_PRINTED[opt]
    assert round(by_u, 5) == SINGLE_PRINTED[opt]
    assert abs(by_w - by_u) < 1e-12


def test_single_input_closed_forms():
    """Global: only (x_1 - x_3) is active, p = (-0.1, 1) / 1.01, 1/2 ||p||^2 = 1 / 2.02.
    Local: only (x_2 - x_3) = (1, 0) is active, p = (1, 0), 1/2 ||p||^2 = 1 / 2."""
    assert abs(p_svm_by_w_svm(SINGLE_X, SINGLE_W, np.array([0])) - 1 / 2.02) < 1e-7
    assert abs(p_svm_by_w_svm(SINGLE_X, SINGLE_W, np.array([1])) - 0.5) < 1e-12


def test_single_input_without_key_query_projection_differs():
    """The test can fail: keeping the value coordinate (W = I) moves the global value."""
    value = p_svm_by_w_svm(SINGLE_X, np.eye(3), np.array([0]))
    assert round(value, 5) != SINGLE_PRINTED[0]  # 0.49020


@pytest.mark.parametrize("opt", [0, 1])
def test_single_input_cvxpy_reference(opt):
    pytest.importorskip("cvxpy")
    W = max_margin.solve_w_svm_cvxpy(lifted(SINGLE_X, SINGLE_W), np.array([opt]), **CVX_OPTS)
    assert round(half_sq_norm(W), 5) == SINGLE_PRINTED[opt]


# --- joint_training.ipynb -------------------------------------------------------------------
def test_joint_training_p_svm_matches_printed_value():
    by_w = p_svm_by_w_svm(JOINT_X, np.eye(2), JOINT_OPT)
    by_u = p_svm_by_u_svm(JOINT_X, np.eye(2), JOINT_OPT)
    assert round(by_w, 5) == JOINT_PRINTED
    assert round(by_u, 5) == JOINT_PRINTED
    # closed form: examples 2 and 3 active, p_mm = (4/3, 1/3), 1/2 ||p_mm||^2 = 17/18
    assert abs(by_w - 17 / 18) < 1e-12
    sol = max_margin.solve_w_svm(lifted(JOINT_X, np.eye(2)), JOINT_OPT)
    np.testing.assert_allclose(sol.W[:2, -1], [4 / 3, 1 / 3], atol=1e-12)


def test_joint_training_loose_data_differs():
    """The test can fail: the notebook's other setting (tight_converge = False) gives 0.8125."""
    value = p_svm_by_w_svm(JOINT_X_LOOSE, np.eye(2), JOINT_OPT)
    assert round(value, 5) != JOINT_PRINTED
    assert abs(value - 0.8125) < 1e-12


def test_joint_training_relaxed_p_svm_matches_printed_value():
    """The second printed log: example 3 at margin 0. Our solvers have margin 1 only, so drop
    example 3 and check that its margin-0 constraint holds at the result; then the relaxed
    problem and the dropped one share the optimum (the dropped constraint is inactive)."""
    sol = max_margin.solve_w_svm(lifted(JOINT_X[:2], np.eye(2)), JOINT_OPT[:2])
    p = sol.W[:2, -1]
    assert (JOINT_X[2, 1] - JOINT_X[2, 0]) @ p >= 0
    assert round(half_sq_norm(sol.W), 5) == JOINT_RELAXED_PRINTED


def test_joint_training_decoder_u_svm():
    sol = max_margin.solve_u_svm(JOINT_X, JOINT_Y, JOINT_OPT)
    assert sol.kkt_residual < 1e-9
    np.testing.assert_allclose(sol.u, JOINT_DECODER, atol=1e-12)
    # the peers report the normalised direction; here ||u_mm|| = 1 already
    np.testing.assert_allclose(sol.u / np.linalg.norm(sol.u), JOINT_DECODER, atol=1e-12)
    # all three examples sit on the margin
    np.testing.assert_allclose(sol.margins, 1.0, atol=1e-12)


def test_joint_training_cvxpy_reference():
    pytest.importorskip("cvxpy")
    W = max_margin.solve_w_svm_cvxpy(lifted(JOINT_X, np.eye(2)), JOINT_OPT, **CVX_OPTS)
    assert round(half_sq_norm(W), 5) == JOINT_PRINTED
    u = max_margin.solve_u_svm_cvxpy(JOINT_X, JOINT_Y, JOINT_OPT, **CVX_OPTS)
    np.testing.assert_allclose(u, JOINT_DECODER, atol=1e-7)


# ------------------------------------------------ cross-attention: the queries Z (model.queries)

# One sample of two tokens x_1 = e_1, x_2 = e_2, the first optimal, and the query z = (0, 2):
# one constraint <a b^T, W> >= 1 with a = x_1 - x_2 = (1, -1) and b = z, so the least-norm W
# is a b^T / (||a||^2 ||b||^2) = [[0, 1/4], [0, -1/4]]. Self-attention (b = x_1 = e_1) has
# a e_1^T / 2 = [[1/2, 0], [-1/2, 0]] instead.
HAND_X = np.array([[[1.0, 0.0], [0.0, 1.0]]])
HAND_OPT = np.array([0])
HAND_Z = np.array([[0.0, 2.0]])
HAND_W_CROSS = np.array([[0.0, 0.25], [0.0, -0.25]])
HAND_W_SELF = np.array([[0.5, 0.0], [-0.5, 0.0]])


def test_the_constraints_take_the_queries_where_given():
    a, b = max_margin.w_svm_constraints(HAND_X, HAND_OPT, HAND_Z)
    np.testing.assert_array_equal(a, [[1.0, -1.0]])
    np.testing.assert_array_equal(b, HAND_Z)
    _, b_self = max_margin.w_svm_constraints(HAND_X, HAND_OPT)
    np.testing.assert_array_equal(b_self, [[1.0, 0.0]])
    # larger: every row's b is its sample's query, in the order (i, then t != opt_i)
    X = np.random.default_rng(0).standard_normal((3, 4, 5))
    Z = np.random.default_rng(1).standard_normal((3, 5))
    opt = np.array([0, 2, 3])
    a, b = max_margin.w_svm_constraints(X, opt, Z)
    np.testing.assert_array_equal(b, np.repeat(Z, 3, axis=0))
    np.testing.assert_array_equal(a[4], X[1, 2] - X[1, 1])


def test_the_w_svm_with_queries_is_the_hand_computed_one():
    got = max_margin.solve_w_svm(HAND_X, HAND_OPT, queries=HAND_Z)
    np.testing.assert_allclose(got.W, HAND_W_CROSS, atol=1e-12)
    np.testing.assert_allclose(got.margins, [1.0], atol=1e-12)
    # the control: without Z the same tokens give self-attention's W_mm
    np.testing.assert_allclose(max_margin.solve_w_svm(HAND_X, HAND_OPT).W, HAND_W_SELF, atol=1e-12)
    data = {"X": HAND_X, "opt": HAND_OPT, "Z": HAND_Z, "y": np.ones(1)}
    solved = max_margin.solve_for_dataset(data, False, "hand")["W_mm"]
    np.testing.assert_allclose(solved.W, HAND_W_CROSS, atol=1e-12)


# ---- the least-distance dual's Cholesky steps (the l2 u-SVM's) against eigh's and lstsq's ----


def _fig2_sized_grams():
    """The u- and W-SVMs' Gram matrices of fig2's and DM's data (n=20, T=5, d=100)."""
    grams = []
    for model, params in (("example1", dict(n=20, T=5, d=100)), ("dm", dict(n=20, T=5, d=100))):
        ds = models.generate(model, 1, params)
        z = max_margin.u_svm_constraints(ds["X"], ds["y"], ds["opt"])
        a, b = max_margin.w_svm_constraints(ds["X"], ds["opt"])
        grams += [z @ z.T, (a @ a.T) * (b @ b.T)]
    return grams


def test_the_cholesky_steps_give_the_default_paths_duals():
    """Cholesky's factor of K + 11^T and its solve on the support pose the same problems as
    eigh's factor and lstsq's solve (the default, every stored SVM's): the duals agree to
    rounding (the polish makes them a function of the support alone), both meeting the
    Gram KKT conditions."""
    grams = _fig2_sized_grams()
    new = [max_margin.least_distance_dual(K, cholesky=True) for K in grams]
    old = [max_margin.least_distance_dual(K) for K in grams]
    for K, a, b in zip(grams, new, old, strict=True):
        assert np.array_equal(a > 0, b > 0)
        assert rel_err(a, b) < 1e-13
        assert max_margin._gram_kkt_residual(K, a) < 1e-12
    # the control: two computations, not one twice (their roundings differ)
    assert not all(np.array_equal(a, b) for a, b in zip(new, old, strict=True))


def test_the_factor_is_cholesky_only_where_asked_and_h_is_well_conditioned():
    """R^T R = H and R^T c = 1 on every branch; a singular H (a duplicated constraint) takes
    the eigendecomposition (fewer rows than m: its null space dropped), as does any H
    without `cholesky`."""
    K = _fig2_sized_grams()[0]
    H = K / K.diagonal().max() + 1.0
    z = np.vstack([np.eye(3), np.eye(3)[:1]])  # the first constraint twice: K singular
    for H_, cholesky, rows in ((H, True, len(K)), (H, False, len(K)), (z @ z.T + 1.0, True, 3)):
        R, c = max_margin._least_distance_factor(H_, cholesky)
        assert R.shape[0] == rows
        np.testing.assert_allclose(R.T @ R, H_, atol=1e-12)
        np.testing.assert_allclose(R.T @ c, np.ones(len(H_)), atol=1e-12)
    triangular = [np.allclose(R, np.triu(R)) for R, _ in
                  (max_margin._least_distance_factor(H, c) for c in (True, False))]  # fmt: skip
    assert triangular == [True, False]  # the control: Cholesky's only where asked


def test_the_polish_falls_back_to_least_squares_on_a_singular_support():
    """Both copies of a duplicated constraint in the support: K_SS is singular, Cholesky has
    no answer, lstsq's minimum-norm one is kept as without Cholesky."""
    z = np.vstack([np.eye(3), np.eye(3)[:1]])
    K = z @ z.T
    split = np.array([0.5, 1.0, 1.0, 0.5])  # the duals of e_1 split between its two copies
    rough = split * (1 + 1e-3 * np.array([1.0, -1.0, 1.0, -1.0]))
    assert max_margin._cholesky_solve(K, np.ones(4)) is None
    polished = max_margin._polish(K, rough, cholesky=True)
    np.testing.assert_array_equal(polished, max_margin._polish(K, rough))
    np.testing.assert_allclose(polished, split, atol=1e-12)
    assert max_margin._gram_kkt_residual(K, polished) < max_margin._gram_kkt_residual(K, rough)
