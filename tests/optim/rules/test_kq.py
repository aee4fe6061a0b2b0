"""The K/Q rule (attnbias.optim.rules.kq): K and Q stepped from a start drawn from the data."""

from __future__ import annotations

import numpy as np

from attnbias.data import models
from attnbias.optim import rules
from attnbias.optim.directions import Block
from attnbias.optim.rule import run_seed
from attnbias.optim.spec import OptimizerSpec


def _block(G, log_scale=0.0):
    return Block(np.array([log_scale]), np.array(G, dtype=float)[None])


def test_kq_steps_k_and_q_from_a_start_drawn_from_the_data():
    """W = W0 + K Q^T; one step: K1 = K0 - lr G Q0, Q1 = Q0 - lr G^T K0. The start is a
    function of the run's seed: the same seed gives the same K0, Q0."""
    spec = OptimizerSpec("kq", lr=0.5, init_scale=0.3)
    W0 = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    params = {"W": W0.copy()}
    update = rules.get("kq").update(spec, params, [7])
    draws = 0.3 * np.random.default_rng(7).standard_normal((2, 2, 2))
    K0, Q0 = draws[0], draws[1]
    np.testing.assert_allclose(params["W"][0], W0[0] + K0 @ Q0.T, rtol=1e-15)
    G = np.array([[1.0, 2.0], [0.0, -1.0]])
    update.step(0, params, {"W": _block(G)})
    K1, Q1 = K0 - 0.5 * G @ Q0, Q0 - 0.5 * G.T @ K0
    np.testing.assert_allclose(params["W"][0], W0[0] + K1 @ Q1.T, rtol=1e-14)
    ds = models.generate("example1", 0, dict(n=3, T=2, d=4))
    assert run_seed(ds["X"], ds["W0"]) == run_seed(ds["X"].copy(), ds["W0"])
