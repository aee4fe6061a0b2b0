"""Muon (attnbias.optim.rules.muon): gradients of astronomically small scales mixed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rule_steps import factored_block, stepped

from attnbias.optim.spec import OptimizerSpec


def test_muon_mixes_gradients_of_astronomically_small_scales():
    """beta = 0.5: M_1 = G_1 = e^s A, M_2 = 0.5 G_1 + G_2 with G_2 = 2 e^s B, s = -1000 (each
    e^s underflows to 0 in floats). A = e_11, B = e_12: M_2 ~ [0.5, 2; 0, 0], rank one, so
    D_2 = M_2 / ||M_2|| = [0.5, 2; 0, 0] / sqrt(4.25); D_1 = U V^T(A) = A."""
    s = -1000.0
    steps = [
        factored_block([[1.0, 0.0], [0.0, 0.0]], np.eye(2), s),
        factored_block([[0.0, 1.0], [0.0, 0.0]], np.eye(2), s + math.log(2.0)),
    ]
    W = stepped(OptimizerSpec("muon", lr=0.1, beta=0.5), np.zeros((2, 2)), steps)
    D1, D2 = np.array([[1.0, 0], [0, 0]]), np.array([[0.5, 2.0], [0, 0]]) / math.sqrt(4.25)
    expected = -0.1 * (D1 + D2)
    np.testing.assert_allclose(W, expected, rtol=1e-12)  # an SVD: a few ulps per entry


def test_the_polar_factor_keeps_the_singular_values_above_its_cut_off():
    """G = diag(1, 1e-6, 1e-12): the polar factor weighs each kept direction 1, so the
    cut-off decides the step: polar_cutoff 1e-8 keeps two directions, 1e-5 one, and the
    rounding floor's old rule (max(d, n) eps, 7e-16 here) would have kept all three."""
    G = np.diag([1.0, 1e-6, 1e-12])
    for cutoff, kept in [(1e-8, [1, 1, 0]), (1e-5, [1, 0, 0]), (1e-13, [1, 1, 1])]:
        spec = OptimizerSpec("muon", lr=1.0, beta=0.0, polar_cutoff=cutoff)
        W = stepped(spec, np.zeros((3, 3)), [factored_block(G, np.eye(3))])
        np.testing.assert_allclose(W, -np.diag(kept), atol=1e-12, err_msg=f"{cutoff}")


@pytest.mark.parametrize("cutoff", [0.0, 1.0, -1e-8])
def test_a_polar_cut_off_outside_0_1_is_refused(cutoff):
    with pytest.raises(ValueError, match="polar_cutoff"):
        OptimizerSpec("muon", polar_cutoff=cutoff)
