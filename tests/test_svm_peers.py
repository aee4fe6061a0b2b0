"""Peers' printed SVM values as tests.

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

import numpy as np
import pytest

from attnbias.svm import max_margin

# Tight reference tolerances, as in tests/test_svm.py.
CVX_OPTS = dict(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)


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
