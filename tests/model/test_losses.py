"""Losses in log space against mpmath, including the Polyak excess for tiny delta."""

from __future__ import annotations

import math

import mpmath
import pytest
import torch

from attnbias.model import losses
from attnbias.model.losses import get_loss

mpmath.mp.dps = 50

Z = [-800.0, -40.0, -19.5, -3.0, -1e-3, 0.0, 1e-9, 0.7, 5.0, 19.9, 45.0, 700.0, 1e4]
# torch's softplus(x) returns x for x > 20 (its default threshold), off by log1p(e^-x) ~ e^-x:
# our losses must stay exact there.
SOFTPLUS_WINDOW = [-25.0, -20.5, 20.5, 25.0]


def mp_value(name, z):
    z = mpmath.mpf(z)
    return mpmath.exp(-z) if name == "exponential" else mpmath.log1p(mpmath.exp(-z))


def mp_neg_slope(name, z):
    z = mpmath.mpf(z)
    return mpmath.exp(-z) if name == "exponential" else 1 / (1 + mpmath.exp(z))


def t(x):
    return torch.tensor(x, dtype=torch.float64)


def close(got, expected, tol=1e-14):
    """|got - expected| <= tol * max(1, |expected|): the log-values are O(1) to O(1e4)."""
    expected = float(expected)
    return abs(got - expected) <= tol * max(1.0, abs(expected))


@pytest.mark.parametrize("name", ["exponential", "logistic"])
def test_log_value_and_log_neg_slope_against_mpmath(name):
    loss = get_loss(name)
    got_value = loss.log_value(t(Z))
    got_slope = loss.log_neg_slope(t(Z))
    for k, z in enumerate(Z):
        assert close(got_value[k].item(), mpmath.log(mp_value(name, z))), (name, z)
        assert close(got_slope[k].item(), mpmath.log(mp_neg_slope(name, z))), (name, z)


def test_exponential_exact_in_softplus_window():
    loss = get_loss("exponential")
    for z in SOFTPLUS_WINDOW:
        assert close(loss.log_value(t(z)).item(), mpmath.log(mp_value("exponential", z)))
        assert close(loss.log_neg_slope(t(z)).item(), mpmath.log(mp_neg_slope("exponential", z)))


@pytest.mark.parametrize("z", SOFTPLUS_WINDOW)
def test_logistic_in_softplus_window(z):
    loss = get_loss("logistic")
    assert close(loss.log_value(t(z)).item(), mpmath.log(mp_value("logistic", z)))
    assert close(loss.log_neg_slope(t(z)).item(), mpmath.log(mp_neg_slope("logistic", z)))


@pytest.mark.parametrize("x", [20.5, 25.0])
def test_log_log1p_exp_in_softplus_window(x):
    expected = mpmath.log(mpmath.log1p(mpmath.exp(mpmath.mpf(x))))
    assert close(losses.log_log1p_exp(t(x)).item(), expected)


@pytest.mark.parametrize("name", ["exponential", "logistic"])
def test_log_value_matches_direct_float64_on_moderate_inputs(name):
    z = torch.linspace(-10, 10, 41, dtype=torch.float64)
    loss = get_loss(name)
    direct = torch.exp(-z) if name == "exponential" else torch.log1p(torch.exp(-z))
    torch.testing.assert_close(loss.log_value(z), torch.log(direct), rtol=1e-14, atol=1e-14)
    slope = torch.exp(-z) if name == "exponential" else torch.sigmoid(-z)
    torch.testing.assert_close(loss.log_neg_slope(z), torch.log(slope), rtol=1e-14, atol=1e-14)


G = [-3.0, -0.5, 0.0, 0.5, 1.0, 4.0, 30.0]
DELTAS = [1e-12, 3e-9, 2e-8, 1e-5, 0.01, 0.5, 2.0]


@pytest.mark.parametrize("name", ["exponential", "logistic"])
def test_log_excess_against_mpmath(name):
    loss = get_loss(name)
    for g in G:
        for d in DELTAS:
            got = loss.log_excess(t(g), t(d), t(math.log(d)), t(1.0))[0].item()
            expected = mpmath.log(mp_value(name, mpmath.mpf(g) - mpmath.mpf(d)) - mp_value(name, g))
            assert close(got, expected), (name, g, d, got, float(expected))


@pytest.mark.parametrize("name", ["exponential", "logistic"])
def test_log_excess_matches_direct_subtraction_for_moderate_delta(name):
    g = torch.tensor([0.3, 1.0, 2.0], dtype=torch.float64)
    d = torch.tensor([0.2, 0.5, 1.5], dtype=torch.float64)
    value = (
        (lambda z: torch.exp(-z))
        if name == "exponential"
        else (lambda z: torch.log1p(torch.exp(-z)))
    )
    direct = torch.log(value(g - d) - value(g))
    log_abs, sign = get_loss(name).log_excess(g, d, torch.log(d), torch.sign(d))
    torch.testing.assert_close(log_abs, direct, rtol=1e-13, atol=1e-13)
    assert bool((sign == 1).all())


@pytest.mark.parametrize("name", ["exponential", "logistic"])
def test_log_excess_is_signed_for_negative_delta(name):
    gs, ds = [0.3, 1.0, 2.0], [-0.2, -0.5, -1e-12]
    g, d = t(gs), t(ds)
    log_abs, sign = get_loss(name).log_excess(g, d, torch.log(d.abs()), torch.sign(d))
    assert bool((sign == -1).all())
    for k, (gk, dk) in enumerate(zip(gs, ds, strict=True)):
        with mpmath.workdps(60):
            expected = mpmath.log(mp_value(name, gk) - mp_value(name, mpmath.mpf(gk) - dk))
        assert close(log_abs[k].item(), expected), (gk, dk)


@pytest.mark.parametrize("name", ["exponential", "logistic"])
@pytest.mark.parametrize("g", [0.5, 1.0, 3.0])
def test_log_excess_exact_for_tiny_delta(name, g):
    delta = 1e-300
    log_delta = math.log(delta)
    # plain subtraction loses it completely
    value = (
        (lambda z: math.exp(-z)) if name == "exponential" else (lambda z: math.log1p(math.exp(-z)))
    )
    assert value(g - delta) - value(g) == 0.0
    got = get_loss(name).log_excess(t(g), t(delta), t(log_delta), t(1.0))[0].item()
    with mpmath.workdps(400):
        expected = mpmath.log(mp_value(name, mpmath.mpf(g) - mpmath.mpf(delta)) - mp_value(name, g))
    assert math.isfinite(got)
    assert close(got, expected), (got, float(expected))


@pytest.mark.parametrize("name", ["exponential", "logistic"])
def test_log_excess_when_delta_underflows_but_log_delta_is_known(name):
    """delta = e^{-1000} is 0.0 in float64; log_delta carries it (as attention.forward does)."""
    g = 1.0
    log_delta = -1000.0
    delta = math.exp(log_delta)
    assert delta == 0.0
    got = get_loss(name).log_excess(t(g), t(delta), t(log_delta), t(1.0))[0].item()
    # l(g - d) - l(g) = d (-l'(g)) (1 + O(d)):  log = log d + log(-l'(g))
    expected = log_delta + float(mpmath.log(mp_neg_slope(name, g)))
    assert close(got, expected)


@pytest.mark.parametrize("name", ["exponential", "logistic"])
def test_log_excess_zero_delta_is_minus_inf(name):
    got, sign = get_loss(name).log_excess(
        t([1.0, 2.0]), t([0.0, 0.0]), t([-math.inf, -math.inf]), t([0.0, 0.0])
    )
    assert bool((got == -math.inf).all()) and bool((sign == 0).all())


def test_helpers():
    x = t([0.0, 1e-300, 1e-9, 1e-8, 2e-8, 0.3, 5.0, 100.0])
    got = losses.log_abs_expm1(x, torch.log(x))
    for k, v in enumerate(x.tolist()):
        expected = -math.inf if v == 0 else float(mpmath.log(mpmath.expm1(mpmath.mpf(v))))
        assert got[k].item() == expected or close(got[k].item(), expected), v
    neg = -x[1:]
    got = losses.log_abs_expm1(neg, torch.log(neg.abs()))
    for k, v in enumerate(neg.tolist()):
        expected = float(mpmath.log(-mpmath.expm1(mpmath.mpf(v))))
        assert close(got[k].item(), expected), v
    xs = [-1e4, -745.0, -30.0, -20.0001, -19.9999, -1.0, 0.0, 3.0, 19.9, 40.0, 800.0]
    got = losses.log_log1p_exp(t(xs))
    for k, v in enumerate(xs):
        expected = mpmath.log(mpmath.log1p(mpmath.exp(mpmath.mpf(v))))
        assert close(got[k].item(), expected), v


def test_unknown_loss():
    with pytest.raises(ValueError, match="hinge"):
        get_loss("hinge")
    assert get_loss("exponential").name == "exponential"
    assert get_loss("logistic").name == "logistic"
