"""Sign descent (attnbias.optim.rules.sign) and its schedule, by hand."""

from __future__ import annotations

import math

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


def test_sign_descent_steps_by_sign_and_its_schedule():
    G = [[0.5, -2.0], [0.0, 3.0]]
    W = _step(OptimizerSpec("sign", lr=0.1), np.zeros((2, 2)), [_block(G, -900.0)])
    assert np.array_equal(W, [[-0.1, 0.1], [0.0, -0.1]])  # scale-free: e^-900 changes nothing
    sqrt = OptimizerSpec("sign", lr=0.1, schedule="sqrt")
    W = _step(sqrt, np.zeros((2, 2)), [_block(G) for _ in range(4)])
    steps = 0.1 * (1 + 1 / math.sqrt(2) + 1 / math.sqrt(3) + 1 / 2)  # lr / sqrt(t + 1)
    np.testing.assert_allclose(W, [[-steps, steps], [0.0, -steps]], rtol=1e-15)
