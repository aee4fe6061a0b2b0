"""Muon (attnbias.optim.rules.muon): gradients of astronomically small scales mixed."""

from __future__ import annotations

import math

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


def _factored(left, Q, log_scale=0.0):
    """G~ = left @ Q, as full_matrix hands it to the spectral rules."""
    basis = QueryBasis.of(np.array(Q, dtype=float)[None])
    return Block(np.array([log_scale]), None, np.array(left, dtype=float)[None], basis)


def test_muon_mixes_gradients_of_astronomically_small_scales():
    """beta = 0.5: M_1 = G_1 = e^s A, M_2 = 0.5 G_1 + G_2 with G_2 = 2 e^s B, s = -1000 (each
    e^s underflows to 0 in floats). A = e_11, B = e_12: M_2 ~ [0.5, 2; 0, 0], rank one, so
    D_2 = M_2 / ||M_2|| = [0.5, 2; 0, 0] / sqrt(4.25); D_1 = U V^T(A) = A."""
    s = -1000.0
    steps = [
        _factored([[1.0, 0.0], [0.0, 0.0]], np.eye(2), s),
        _factored([[0.0, 1.0], [0.0, 0.0]], np.eye(2), s + math.log(2.0)),
    ]
    W = _step(OptimizerSpec("muon", lr=0.1, beta=0.5), np.zeros((2, 2)), steps)
    D1, D2 = np.array([[1.0, 0], [0, 0]]), np.array([[0.5, 2.0], [0, 0]]) / math.sqrt(4.25)
    expected = -0.1 * (D1 + D2)
    np.testing.assert_allclose(W, expected, rtol=1e-12)  # an SVD: a few ulps per entry
