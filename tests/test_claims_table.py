"""The claims table's arithmetic, on hand-made aggregate tables with known answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from attnbias import claims

T = 10_000
ITERATIONS = np.unique(np.rint(np.geomspace(1, T, 60)).astype(int))


def long_table(curves: dict) -> pd.DataFrame:
    """{(optimizer, metric): f(t, seed)} -> long-format aggregate table, two seeds."""
    rows = []
    for (optimizer, metric), f in curves.items():
        for seed in (0, 1):
            for t in ITERATIONS:
                rows.append(("x", optimizer, seed, t, metric, f(float(t), seed)))
    return pd.DataFrame(
        rows, columns=["experiment", "optimizer", "seed", "iteration", "metric", "value"]
    )


def fixed_decoder(ngd_gap_exponent: float) -> pd.DataFrame:
    return long_table(
        {
            ("gd", "gap_W"): lambda t, s: 0.5,
            ("gd", "W_norm"): lambda t, s: 2.0 * math.log(t) + 1,
            ("ngd", "gap_W"): lambda t, s: (1 + s) * t**ngd_gap_exponent,
            ("ngd", "W_norm"): lambda t, s: 0.1 * t,
            ("ngd", "log1m_opt_softmax"): lambda t, s: -0.1 * t / 2.0,
        }
    )


def by_quantity(rows, start):
    (row,) = [r for r in rows if r.quantity.startswith(start)]
    return row


def test_first_passage_and_fit():
    values = pd.DataFrame({0: [1.0, 0.5, 0.05, 0.001], 1: [1.0, 1.0, 1.0, 1.0]}, index=[1, 2, 3, 4])
    np.testing.assert_array_equal(claims.first_passage(values, 0.1), [3, math.inf])
    slope, r2 = claims.fit(np.arange(5.0), 3 * np.arange(5.0) + 1)
    assert slope == pytest.approx(3) and r2 == pytest.approx(1)


def test_fixed_decoder_claims_hold_where_they_should():
    rows = claims.fixed_decoder_claims(
        "x", fixed_decoder(-2.0), {"gd": {}, "ngd": {"lr": 0.1}}, [2.0, 2.0]
    )
    assert all(r.holds for r in rows), [r.quantity for r in rows if not r.holds]
    passage = by_quantity(rows, "ngd: first iteration with 1 - cos(W_t, W_mm) < 0.01")
    # seed 0: t^-2 < 1e-2 from t = 11; seed 1: 2 t^-2 < 1e-2 from t = 15 (on the logged grid)
    assert passage.low == ITERATIONS[ITERATIONS > 10][0]
    assert passage.high == ITERATIONS[ITERATIONS > math.sqrt(200)][0]
    rate = by_quantity(rows, "ngd: slope of log(1 - cos")
    assert rate.mean == pytest.approx(-2.0) and rate.r2 == pytest.approx(1.0)
    softmax = by_quantity(rows, "ngd: slope of log(1 - mean opt softmax)")
    assert softmax.mean == pytest.approx(-0.05)  # -lr / ||W_mm|| = -0.1 / 2


def test_a_claim_that_fails_says_so():
    rows = claims.fixed_decoder_claims(
        "x", fixed_decoder(-0.5), {"gd": {}, "ngd": {"lr": 0.1}}, [2.0, 2.0]
    )
    rate = by_quantity(rows, "ngd: slope of log(1 - cos")
    assert rate.mean == pytest.approx(-0.5) and not rate.holds
    # t^-0.5 < 1e-3 only after t = 1e6: never within the run, so NGD is not first
    assert not by_quantity(rows, "ngd: first iteration with 1 - cos(W_t, W_mm) < 0.001").holds
    table = pd.DataFrame([r.__dict__ for r in rows])
    assert "**does not hold**" in claims.to_markdown(table)


def test_two_token_rates():
    table = long_table(
        {
            ("gd", "gap_W"): lambda t, s: 0.3 / math.log(max(t, 2.0)) ** 2,
            ("ngd", "gap_W"): lambda t, s: 5.0 / t**2,
        }
    )
    gd, ngd = claims.two_token_claims("x", table, {"gd": {}, "ngd": {}})
    assert gd.mean == pytest.approx(-2.0) and gd.holds
    assert ngd.mean == pytest.approx(-2.0) and ngd.holds


def bad_init_2d(sample_1) -> pd.DataFrame:
    """Two samples: sample 1 starts disfavoured (below 1/T = 1/2), sample 2 favoured."""
    curves = {}
    for opt in ("gd", "ngd"):
        curves[(opt, "opt_softmax_0")] = lambda t, s: sample_1(t)
        curves[(opt, "opt_softmax_1")] = lambda t, s: 1 - 0.4 / (t + 1)
        curves[(opt, "gap_W")] = lambda t, s: 1 / t
        curves[(opt, "loss")] = lambda t, s: 0.68 + 1 / t
    return long_table(curves)


def test_bad_init_2d_claims_see_the_dip_and_the_convergence():
    # falls from 0.39 (t = 1) to about 0.24 near t = 30, then rises to 0.999
    dip = lambda t: 0.999 * (1 - math.exp(-t / 300)) + 0.4 * math.exp(-t / 30)  # noqa: E731
    rows = claims.bad_init_2d_claims("x", bad_init_2d(dip), {"gd": {}, "ngd": {}}, 2)
    assert len(rows) == 4 and all(r.holds for r in rows), [r.quantity for r in rows]
    lowest = by_quantity(rows, "gd: lowest opt softmax of sample 1")
    assert 0.2 < lowest.mean < 0.3
    # a softmax that only rises has no dip: the first claim fails, the convergence one holds
    rise = lambda t: 0.999 - 0.6 / t  # noqa: E731
    rows = claims.bad_init_2d_claims("x", bad_init_2d(rise), {"gd": {}}, 2)
    assert [r.holds for r in rows] == [False, True]
