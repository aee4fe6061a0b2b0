"""Sign descent (attnbias.optim.rules.sign) and its schedule, by hand."""

from __future__ import annotations

import math

import numpy as np
from rule_steps import grad_block, stepped

from attnbias.optim.spec import OptimizerSpec


def test_sign_descent_steps_by_sign_and_its_schedule():
    G = [[0.5, -2.0], [0.0, 3.0]]
    W = stepped(OptimizerSpec("sign", lr=0.1), np.zeros((2, 2)), [grad_block(G, -900.0)])
    assert np.array_equal(W, [[-0.1, 0.1], [0.0, -0.1]])  # scale-free: e^-900 changes nothing
    sqrt = OptimizerSpec("sign", lr=0.1, schedule="sqrt")
    W = stepped(sqrt, np.zeros((2, 2)), [grad_block(G) for _ in range(4)])
    steps = 0.1 * (1 + 1 / math.sqrt(2) + 1 / math.sqrt(3) + 1 / 2)  # lr / sqrt(t + 1)
    np.testing.assert_allclose(W, [[-steps, steps], [0.0, -steps]], rtol=1e-15)
