"""Mirror descent (attnbias.optim.rules.mirror), one step computed by hand."""

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


def test_mirror_descent_by_hand():
    """p = 3: Z0 = sign(W0)|W0|^2 = (1, -4); Z1 = Z0 - lr G = (1, -4) - 0.5 (2, 2) = (0, -5);
    W1 = sign(Z1) |Z1|^(1/2) = (0, -sqrt 5)."""
    W = _step(OptimizerSpec("mirror", lr=0.5, p=3.0), [[1.0, -2.0]], [_block([[2.0, 2.0]])])
    np.testing.assert_allclose(W[0], [0.0, -math.sqrt(5)], atol=1e-15)
    # the gradient's scale is absolute here: e^s G with s = log 0.5 halves the step
    half = _block([[2.0, 2.0]], math.log(0.5))
    W = _step(OptimizerSpec("mirror", lr=1.0, p=3.0), [[1.0, -2.0]], [half])
    np.testing.assert_allclose(W[0], [0.0, -math.sqrt(5)], atol=1e-15)
