"""Normalized steepest descent (attnbias.optim.rules.nsd),
by hand, in an lp and the spectral norm.
"""

from __future__ import annotations

import numpy as np

from attnbias.optim import rules
from attnbias.optim.directions import Block, QueryBasis
from attnbias.optim.spec import OptimizerSpec


def _step(spec, W0, blocks, steps=None):
    """W after the rule's steps from W0 (B = 1), each step's gradient a Block of W."""
    params = {"W": np.array(W0, dtype=float)[None]}
    update = rules.get(spec.rule).update(spec, params, [0])
    for t, block in enumerate(blocks if steps is None else steps):
        update.step(t, params, {"W": block})
    return params["W"][0]


def _block(G, log_scale=0.0):
    return Block(np.array([log_scale]), np.array(G, dtype=float)[None])


def _factored(left, Q, log_scale=0.0):
    """G~ = left @ Q, as full_matrix hands it to the spectral rules."""
    basis = QueryBasis.of(np.array(Q, dtype=float)[None])
    return Block(np.array([log_scale]), None, np.array(left, dtype=float)[None], basis)


def test_lp_steepest_descent_by_hand():
    """p = 3, q = 3/2: D = sign(G) |G|^(1/2) / ||G||_(3/2)^(1/2); for G = [1, -4; 0, 0]:
    ||G||_(3/2) = (1 + 8)^(2/3), so D = [1, -2; 0, 0] / 9^(1/3) (||D||_3 = 1)."""
    W = _step(OptimizerSpec("nsd", lr=0.5, norm="l3"), np.ones((2, 2)), [_block([[1, -4], [0, 0]])])
    c = 0.5 / 9 ** (1 / 3)
    np.testing.assert_allclose(W, [[1 - c, 1 + 2 * c], [1, 1]], rtol=1e-14)
    max_norm = OptimizerSpec("nsd", lr=0.5, norm="max")
    W = _step(max_norm, np.zeros((2, 2)), [_block([[1, -4], [0, 2]])])
    assert np.array_equal(W, [[-0.5, 0.5], [0, -0.5]])  # max: sign descent


def test_spectral_steepest_descent_by_hand():
    """G = v v^T with v = (1, 2), given as left @ Q with Q = diag(2, 1): U V^T = v v^T / 5."""
    block = _factored([[0.5, 2.0], [1.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]], -5000.0)
    W = _step(OptimizerSpec("nsd", lr=1.0, norm="spectral"), np.zeros((2, 2)), [block])
    np.testing.assert_allclose(W, -np.array([[0.2, 0.4], [0.4, 0.8]]), rtol=1e-14)
    # full rank: G = diag(3, -2) has U V^T = diag(1, -1)
    block = _factored([[3.0, 0.0], [0.0, -2.0]], np.eye(2))
    W = _step(OptimizerSpec("nsd", lr=1.0, norm="spectral"), np.zeros((2, 2)), [block])
    np.testing.assert_allclose(W, [[-1.0, 0.0], [0.0, 1.0]], atol=1e-15)
