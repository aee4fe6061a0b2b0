"""Reading the aggregate tables (attnbias.claims.measure): first passages, fits, and the
refusal of a table without the rows a claim reads.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from claims_tables import ITERATIONS, OPTS, fixed_table, gd_like, ngd_like, row, rows_of

from attnbias.claims import measure


def test_claims_without_gap_rows_name_experiment_optimizer_and_metric():
    table = pd.DataFrame(
        {
            "experiment": ["fig2"] * 2,
            "optimizer": ["gd"] * 2,
            "seed": [0, 0],
            "iteration": [0, 1],
            "metric": ["loss", "loss"],
            "value": [1.0, 0.5],
        }
    )
    with pytest.raises(ValueError, match="experiment fig2: .* no gap_W rows of optimizer gd"):
        measure.series(table, "gd", "gap_W")


def test_first_passage_and_fit():
    values = pd.DataFrame({0: [1.0, 0.5, 0.05, 0.001], 1: [1.0, 1.0, 1.0, 1.0]}, index=[1, 2, 3, 4])
    np.testing.assert_array_equal(measure.first_passage(values, 0.1), [3, math.inf])
    slope, r2 = measure.fit(np.arange(5.0), 3 * np.arange(5.0) + 1)
    assert slope == pytest.approx(3) and r2 == pytest.approx(1)


def test_a_bound_read_through_a_poor_fit_is_undecided():
    rng = np.random.default_rng(0)
    noise = {t: float(np.exp(rng.normal(0, 2))) for t in ITERATIONS}
    noisy = ngd_like(-0.9) | {"gap_W": lambda t, s: noise[int(t)] * t**-0.9}
    r = row(rows_of(fixed_table(gd=gd_like(), ngd=noisy), OPTS), "ngd rate bound")
    assert r.r2 < measure.R2_MIN and r.verdict.startswith("undecided: poor fit")


def test_rising_at_the_horizon_needs_the_last_interval_and_the_last_decade_on_each_seed():
    """Synthetic margins logged at t = 1, 10, 100, 900, 1000 (the decade before the last t:
    t = 100). Seed 0 rises throughout; seed 1 rose over the decade but fell over the last
    interval (Adam's 0.738 to 0.684); seed 2 rose over the last interval but is below its
    value a decade before; seed 3 rises but is negative."""
    t = [1, 10, 100, 900, 1000]
    values = pd.DataFrame(
        {0: [0.1, 0.2, 0.3, 0.5, 0.6], 1: [0.1, 0.2, 0.3, 0.738, 0.684],
         2: [0.1, 0.9, 0.8, 0.5, 0.6], 3: [-0.9, -0.8, -0.7, -0.6, -0.5]},
        index=t,
    )  # fmt: skip
    rising, t_before, before, t_prev, prev = measure.rising_at_horizon(values)
    assert rising.tolist() == [True, False, False, False]
    assert (t_before, t_prev) == (100, 900)
    assert before.tolist() == [0.3, 0.3, 0.8, -0.7] and prev[1] == 0.738
