"""A rule's steps by hand: W after a rule's steps from W0 on given gradient blocks, and the
blocks (plain, or factored as left @ Q as full_matrix hands them to the spectral rules). For
the one-rule tests of tests/optim/rules/ (test_adam.py, test_kq.py, test_mirror.py,
test_muon.py, test_nsd.py, test_sign.py)."""

from __future__ import annotations

import numpy as np

from attnbias.optim import rules
from attnbias.optim.directions import Block, QueryBasis


def stepped(spec, W0, blocks, steps=None):
    """W after the rule's steps from W0 (B = 1), each step's gradient a Block of W."""
    params = {"W": np.array(W0, dtype=float)[None]}
    update = rules.get(spec.rule).update(spec, params, [0])
    for t, block in enumerate(blocks if steps is None else steps):
        update.step(t, params, {"W": block})
    return params["W"][0]


def grad_block(G, log_scale=0.0):
    """e^log_scale G as a Block of W (B = 1), the way the backends hand a gradient over."""
    return Block(np.array([log_scale]), np.array(G, dtype=float)[None])


def factored_block(left, Q, log_scale=0.0):
    """G~ = left @ Q, as full_matrix hands it to the spectral rules."""
    basis = QueryBasis.of(np.array(Q, dtype=float)[None])
    return Block(np.array([log_scale]), None, np.array(left, dtype=float)[None], basis)
