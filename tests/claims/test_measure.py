"""Reading the aggregate tables (attnbias.claims.measure): first passages, fits, and the
refusal of a table without the rows a claim reads.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from claims_tables import (
    ITERATIONS,
    fixed_table,
    gd_like,
    ngd_like,
    row,
    rows_of,
)

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


OPTS = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1}}


def test_a_bound_read_through_a_poor_fit_is_undecided():
    rng = np.random.default_rng(0)
    noise = {t: float(np.exp(rng.normal(0, 2))) for t in ITERATIONS}
    noisy = ngd_like(-0.9) | {"gap_W": lambda t, s: noise[int(t)] * t**-0.9}
    r = row(rows_of(fixed_table(gd=gd_like(), ngd=noisy), OPTS), "ngd rate bound")
    assert r.r2 < measure.R2_MIN and r.verdict.startswith("undecided: poor fit")
