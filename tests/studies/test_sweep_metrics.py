"""A sweep point's metrics (attnbias.studies.sweep_metrics)."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.studies import (
    sweep_metrics,
)
from attnbias.svm import max_margin

# ---- metrics ------------------------------------------------------------------------------


def runs_with(table: dict, iterations) -> sweep_metrics.Runs:
    rows = len(next(iter(table.values())))
    return sweep_metrics.Runs("x", np.asarray(iterations), table, [{}] * rows, [{}] * rows)


@pytest.mark.parametrize("power", [1.0, 2.0])
def test_the_fitted_rate_is_the_power_of_a_power_law(power):
    t = np.unique(np.geomspace(1, 1e4, 40).astype(int))
    gaps = np.stack([0.5 * t**-power, 3.0 * t**-power])
    rate = sweep_metrics.compute(["rate_W"], runs_with({"gap_W": gaps}, t))["rate_W"]
    np.testing.assert_allclose(rate, -power, rtol=1e-9)


def test_a_threshold_never_crossed_is_infinitely_late():
    table = {"first_gap_W_below_0.01": np.array([[12.0], [np.nan]])}
    values = sweep_metrics.compute(["first_W_below_1e-2"], runs_with(table, [0, 10]))
    assert list(values["first_W_below_1e-2"]) == [12.0, np.inf]


def test_the_support_fraction_metric_counts_the_samples_at_margin_one():
    # u-SVM of x_opt = e_1 (y = +1) and -2 e_1 (y = -1): u_mm = e_1, margins 1 and 2, so one
    # sample of two is a support vector
    X = np.array([[[1.0, 0.0], [0.0, 0.3]], [[0.0, 0.3], [-2.0, 0.0]]])
    data = {"X": X, "y": np.array([1.0, -1.0]), "opt": np.array([0, 1])}
    runs = sweep_metrics.Runs("x", np.array([0]), {}, [data], [{"u_mm": np.array([1.0, 0.0])}])
    value = sweep_metrics.compute(["non_support_fraction"], runs)["non_support_fraction"]
    assert list(value) == [0.5]
    u_mm = max_margin.solve_u_svm(X, data["y"], data["opt"]).solution  # our solver finds it too
    np.testing.assert_allclose(u_mm, [1.0, 0.0], atol=1e-9)
    # control: with the second sample at margin 1 too, both are support vectors
    X[1, 1, 0] = -1.0
    assert sweep_metrics.compute(["non_support_fraction"], runs)["non_support_fraction"] == 0


def test_the_loss_ratio_growth_is_the_late_maximum_over_the_early_one():
    t = np.arange(0, 101, 10)
    bounded = np.where(t <= 10, 2.0, 1.5)  # falls after t_last / 10: no growth
    growing = 0.05 * t  # early maximum 0.5 (t = 10), late 5
    table = {"log_loss_ratio": np.stack([bounded, growing])}
    growth = sweep_metrics.compute(["loss_ratio_growth"], runs_with(table, t))
    np.testing.assert_allclose(growth["loss_ratio_growth"], [0.0, 4.5])


def test_a_registered_metric_is_one_function_and_one_line(monkeypatch):
    monkeypatch.setattr(sweep_metrics, "METRICS", dict(sweep_metrics.METRICS))

    @sweep_metrics.metric("samples", "samples per seed")
    def _samples(runs):
        return np.array([len(ds["y"]) for ds in runs.datasets], dtype=float)

    runs = sweep_metrics.Runs("x", np.array([0]), {}, [{"y": [1, -1]}, {"y": [1]}], [{}, {}])
    assert list(sweep_metrics.compute(["samples"], runs)["samples"]) == [2.0, 1.0]
    with pytest.raises(ValueError, match="registered twice"):
        sweep_metrics.metric("samples", "again")(_samples)
