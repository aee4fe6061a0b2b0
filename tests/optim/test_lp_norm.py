"""An l_p norm is spellable for every p a rule accepts (issue 61): mirror descent's p and
NSD's l<p> accept exactly lp_norm's range, whose every p has one name that the norms'
parser, the schema's pattern and the geometry checks read back; any other p is refused
naming the range. (Before: p = 1.0000001 asked for 'l1', which was unknown, and p = 1e6
for 'l1e+06', which the schema refused.)"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_configs import SCHEMA

from attnbias.optim import lp_norm
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm.norm_values import parse_norm

NORM_PATTERN = re.compile(SCHEMA["$defs"]["experiment"]["properties"]["norms"]["items"]["pattern"])
P = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(0.5, 120.0),
    st.integers(-5, 1200).map(lambda k: k / 10),  # one decimal
    st.integers(90, 10100).map(lambda k: k / 100),  # two decimals
    st.integers(0, 12000).map(lambda k: k / 100),
    st.sampled_from([1.0000001, 1e6, 1.01, 1.1, 1.75, 100.0, 99.99, 3, 1.5, 100.1]),
)


@settings(max_examples=300, derandomize=True, database=None)
@given(p=P)
def test_every_p_mirror_descent_accepts_has_a_norm_name_read_back(p):
    try:
        spec = OptimizerSpec("mirror", p=p, lr=1.0)
    except ValueError as err:
        assert "needs p from 1.01 to 100 with at most two decimals" in str(err)
        return
    name = spec.implicit_norm()
    assert NORM_PATTERN.fullmatch(name), name
    assert parse_norm(name).p == p and parse_norm(name).name == name
    nsd = OptimizerSpec("nsd", norm=name, lr=0.1)
    assert nsd.implicit_norm() == name


def test_the_range_and_the_spelling():
    assert [lp_norm.lp_name(p) for p in (3, 3.0, 1.5, 1.01, 1.75, 100, 2.10, 12.25)] == [
        "l3", "l3", "l1.5", "l1.01", "l1.75", "l100", "l2.1", "l12.25"]  # fmt: skip
    for bad in (1, 1.0000001, 1.005, 99.99, 55.55, 100.1, 1e6, float("inf"), float("nan"), True,
                None):  # fmt: skip
        with pytest.raises(ValueError, match=re.escape(lp_norm.P_RANGE)):
            lp_norm.check_p(bad, "p")
    assert lp_norm.parse_lp("fro") is None
    with pytest.raises(ValueError, match="write it as 'l1.5'"):
        lp_norm.parse_lp("l1.50")


def test_the_solver_solves_the_norm_it_is_named_by():
    """The range's reason: cvxpy's pnorm keeps every two-decimal p that check_p accepts
    exactly, and rounds each it refuses, 1.0000001 to 1 and 99.99 to 100 among them."""
    cp = pytest.importorskip("cvxpy")
    x = cp.Variable(3)
    two_decimals = [k / 100 for k in range(101, 10001)]
    accepted = [p for p in two_decimals if _accepted(p)]
    assert all(float(cp.pnorm(x, p).p) == p for p in accepted)
    assert all(float(cp.pnorm(x, p).p) != p for p in two_decimals if not _accepted(p))
    assert {1.75, 3.14, 10.24, 12.25, 55.5, 100.0} <= set(accepted)
    assert lp_norm.P_MIN == accepted[0] and lp_norm.P_MAX == accepted[-1]
    assert float(cp.pnorm(x, 1.0000001).p) == 1.0 and float(cp.pnorm(x, 99.99).p) == 100.0


def _accepted(p) -> bool:
    try:
        lp_norm.check_p(p, "p")
    except ValueError:
        return False
    return True
