"""A sweep point's claims (attnbias.studies.sweep_claims) follow its numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.studies import (
    sweep_claims,
)

# ---- claims -------------------------------------------------------------------------------


def point(values: dict[str, list[float]], metric="m", aggregate="mean", curves=None):
    """A Point with one metric: optimizer -> its seeds' values."""
    per_seed = pd.DataFrame({(metric, o): v for o, v in values.items()})
    per_seed.columns = pd.MultiIndex.from_tuples(per_seed.columns)
    summary = getattr(per_seed, aggregate)().to_frame().T
    return sweep_claims.Point(per_seed, summary, curves if curves is not None else pd.DataFrame())


ORDERED = {"gd": [3.0, 3.5], "ngd": [1.0, 1.2], "ps": [0.5, 0.6]}


@pytest.mark.parametrize(
    "spec, holds",
    [
        ({"claim": "fastest", "optimizer": "ps", "metric": "m"}, (True, 2)),
        ({"claim": "fastest", "optimizer": "ngd", "metric": "m"}, (False, 0)),
        ({"claim": "slowest", "optimizer": "gd", "metric": "m"}, (True, 2)),
        ({"claim": "slowest", "optimizer": "ps", "metric": "m"}, (False, 0)),
        ({"claim": "ahead", "a": "ngd", "b": "gd", "metric": "m"}, (True, 2)),
        ({"claim": "ahead", "a": "gd", "b": "ngd", "metric": "m"}, (False, 0)),
        ({"claim": "close", "a": "ngd", "b": "ps", "metric": "m", "factor": 2.0}, (True, 2)),
        ({"claim": "close", "a": "gd", "b": "ps", "metric": "m", "factor": 2.0}, (False, 0)),
        ({"claim": "reaches", "optimizer": "ngd", "metric": "m", "threshold": 1.1}, (True, 1)),
        ({"claim": "reaches", "optimizer": "gd", "metric": "m", "threshold": 1.1}, (False, 0)),
    ],
)
def test_claims_follow_the_numbers(spec, holds):
    assert sweep_claims.judge(point(ORDERED), spec) == holds


def test_a_diverged_run_breaks_every_comparison_with_it():
    numbers = point({"gd": [3.0], "ngd": [np.nan], "ps": [0.5]})
    assert sweep_claims.judge(numbers, {"claim": "fastest", "optimizer": "ps", "metric": "m"}) == (
        False,
        0,
    )


def test_below_throughout_reads_every_logged_t_after_the_burn_in():
    t = [0, 10, 100, 1000]
    rows = []
    for seed, late_cross in ((0, False), (1, True)):
        for i, step in enumerate(t):
            rows.append({"optimizer": "a", "seed": seed, "t": step, "gap_W": 1.0 / (i + 2)})
            b = 1.0 / (i + 1) if not (late_cross and step == 1000) else 0.01
            rows.append({"optimizer": "b", "seed": seed, "t": step, "gap_W": b})
    curves = pd.DataFrame(rows)
    numbers = point({"a": [1.0, 1.0], "b": [1.0, 1.0]}, curves=curves)
    spec = {"claim": "below_throughout", "a": "a", "b": "b", "series": "gap_W"}
    assert sweep_claims.judge(numbers, {**spec, "burn_in": 10}) == (False, 1)
    early = curves[curves["t"] < 1000]
    numbers = point({"a": [1.0, 1.0], "b": [1.0, 1.0]}, curves=early)
    assert sweep_claims.judge(numbers, {**spec, "burn_in": 10}) == (True, 2)
