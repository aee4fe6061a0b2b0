"""Norm names, values and duals (attnbias.svm.norm_values)."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.svm import norm_values

cp = pytest.importorskip("cvxpy")


def test_norm_values_and_duals():
    M = np.array([[3.0, -4.0], [0.0, 0.0]])
    assert norm_values.norm_value(M, "fro") == pytest.approx(5.0)
    assert norm_values.norm_value(M, "max") == pytest.approx(4.0)
    assert norm_values.norm_value(M, "spectral") == pytest.approx(5.0)  # rank one
    assert norm_values.norm_value(M, "nuclear") == pytest.approx(5.0)
    assert norm_values.norm_value(M, "l3") == pytest.approx((27 + 64) ** (1 / 3))
    assert norm_values.dual_norm_value(M, "max") == pytest.approx(7.0)
    assert norm_values.dual_norm_value(M, "l3") == pytest.approx(norm_values.norm_value(M, "l1.5"))
    D = np.diag([2.0, 1.0])
    assert norm_values.dual_norm_value(D, "spectral") == pytest.approx(3.0)
    assert norm_values.dual_norm_value(D, "nuclear") == pytest.approx(2.0)
    v = np.array([3.0, 4.0])
    for name in ("spectral", "nuclear", "fro"):  # l2 on a vector, and its own dual
        assert norm_values.norm_value(v, name) == pytest.approx(5.0)
        assert norm_values.dual_norm_value(v, name) == pytest.approx(5.0)
    assert norm_values.dual_norm_value(v, "max") == pytest.approx(7.0)  # the control: l1
    # no overflow: the l_p norm of huge entries
    assert norm_values.norm_value(np.full((2, 2), 1e200), "l3") == pytest.approx(
        4 ** (1 / 3) * 1e200
    )


def test_parse_norm_round_trips_and_refuses_bad_names():
    for name in ("fro", "max", "spectral", "nuclear", "l3", "l1.5", "l2"):
        assert norm_values.parse_norm(name).name == name
    assert norm_values.parse_norm("l1.5").p == 1.5
    for bad in ("linf", "frobenius", "L3", "l", "", 3, None, "l1e+06"):
        with pytest.raises(ValueError, match="unknown norm"):
            norm_values.parse_norm(bad)
    # p out of lp_norm's range, or one cvxpy would round (99.99 to 100)
    for bad in ("l1", "l0.5", "l1.0000001", "l1000000", "l1.005", "l99.99"):
        with pytest.raises(ValueError, match="needs p from 1.01 to 100 with at most two decimals"):
            norm_values.parse_norm(bad)
    with pytest.raises(ValueError, match="write it as 'l3'"):
        norm_values.parse_norm("l3.0")
