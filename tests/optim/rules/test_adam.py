"""The Adam rule (attnbias.optim.rules.adam), one step computed by hand."""

from __future__ import annotations

import numpy as np

from attnbias.optim import rules
from attnbias.optim.directions import Block
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


def test_adam_by_hand_with_bias_correction():
    """Two steps, scale e^0: m = (1-b1) g1, then b1 m + (1-b1) g2; v likewise with g^2;
    step lr m / (1 - b1^t) / (sqrt(v / (1 - b2^t)) + eps)."""
    lr, b1, b2, eps = 0.1, 0.5, 0.75, 0.1
    g1, g2 = np.array([[1.0, -2.0]]), np.array([[3.0, 0.0]])
    W = _step(OptimizerSpec("adam", lr=lr, beta1=b1, beta2=b2, eps=eps), np.zeros((1, 2)),
              [_block(g1), _block(g2)])  # fmt: skip
    step1 = lr * np.array([1.0, -2.0]) / (np.array([1.0, 2.0]) + eps)  # m^ = g1, v^ = g1^2
    m = np.array([b1 * (1 - b1) * 1 + (1 - b1) * 3, b1 * (1 - b1) * -2])
    v = np.array([b2 * (1 - b2) * 1 + (1 - b2) * 9, b2 * (1 - b2) * 4])
    step2 = lr * (m / (1 - b1**2)) / (np.sqrt(v / (1 - b2**2)) + eps)
    np.testing.assert_allclose(W[0], -(step1 + step2), rtol=1e-14)


def test_adam_against_eps_where_the_gradient_squared_underflows():
    """g = e^-400 (2, -3): g^2 ~ e^-800 underflows to 0 in floats, so the plain formula
    gives lr g / eps = 1e126 with eps = 1e-300; exactly, sqrt(v^) = |g| >> eps and the first
    step is lr sign(g) (to eps / |g| ~ 1e-127)."""
    W = _step(OptimizerSpec("adam", lr=0.1, eps=1e-300), np.zeros((1, 2)),
              [_block([[2.0, -3.0]], -400.0)])  # fmt: skip
    np.testing.assert_allclose(W[0], [-0.1, 0.1], rtol=1e-14)
