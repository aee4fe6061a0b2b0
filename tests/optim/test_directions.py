"""The direction rules' shared arithmetic (attnbias.optim.directions): the normalised
steps' norms in logs (the rest is tested through the rules, tests/optim/rules/)."""

from __future__ import annotations

import math

import numpy as np

from attnbias.optim import directions
from attnbias.optim.spec import OptimizerSpec


def test_log_norm_is_exact_far_below_and_above_the_floats_range():
    G = np.array([[3e-300, 4e-300], [0.0, 0.0], [3e300, 4e300]])
    found = directions.log_norm(G, 2.0)
    np.testing.assert_allclose(found[[0, 2]], [math.log(5e-300), math.log(5e300)], rtol=1e-15)
    assert found[1] == -math.inf
    q = 1.5  # control against the plain formula where it is safe
    H = np.array([[1.0, -2.0, 0.5]])
    np.testing.assert_allclose(np.exp(directions.log_norm(H, q)), np.sum(np.abs(H) ** q) ** (1 / q))


def test_global_normalisation_skips_zero_blocks_and_never_gives_nan():
    spec = OptimizerSpec("mirror", p=2.0, dual_normalize="global")
    blocks = {
        "W": (np.array([0.0, -1000.0]), np.array([[3.0, 4.0], [0.0, 0.0]])),
        "u": (np.array([0.0, -1000.0]), np.array([[0.0, 0.0], [0.0, 0.0]])),
    }
    found = directions.log_coefficients(spec, {"W": 1.0, "u": 1.0}, blocks, 2.0)
    np.testing.assert_allclose(found["W"][0], -math.log(5.0))
    assert found["u"][0] == -math.inf and found["W"][1] == -math.inf == found["u"][1]
