"""The figures' curves: each optimizer's mean over seeds in a band from the lowest to the
highest seed, reduced in one grouped pass (figures.lines.seed_summary). Checked against
seaborn's own per-iteration aggregation (lineplot, estimator="mean", errorbar=("pi",
100)), the way the figures drew them before, on log and linear axes."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import seaborn as sns

from attnbias.figures import algorithm_style, lines

ORDER = ["GD", "NGD", "one seed"]


def _runs() -> pd.DataFrame:
    """Three optimizers on log-spaced iterations: two with 4 seeds of spread-out values,
    one with a single seed (no band)."""
    rng = np.random.default_rng(0)
    rows = []
    for label, seeds in (("GD", 4), ("NGD", 4), ("one seed", 1)):
        for seed in range(seeds):
            for t in (1, 2, 5, 10, 50, 100):
                rows.append((label, seed, t, float(np.exp(rng.normal(-0.1 * t, 2.0)))))
    return pd.DataFrame(rows, columns=["optimizer_label", "seed", "iteration", "value"])


def _drawn(yscale: str, draw) -> tuple[list, list]:
    """The lines' (x, y) and the bands' outlines that `draw(ax, data, styles)` leaves."""
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    ax.set_yscale(yscale)
    keys = dict(zip(ORDER, ("gd", "ngd", "ps"), strict=True))
    draw(ax, _runs(), lines.optimizer_styles(algorithm_style.figure_looks(keys)))
    curves = [(ln.get_xdata().astype(float), ln.get_ydata().astype(float)) for ln in ax.lines]
    # seaborn leaves an empty band for the single seed
    bands = [np.asarray(c.get_paths()[0].vertices) for c in ax.collections if c.get_paths()]
    plt.close(fig)
    return curves, bands


def _seaborn(ax, data, styles):
    sns.lineplot(
        data=data, x="iteration", y="value", **styles, estimator="mean",
        errorbar=("pi", 100), ax=ax, legend=False,
    )  # fmt: skip


def _ours(ax, data, styles):
    lines.seed_lines(ax, data, styles, legend=False)


@pytest.mark.parametrize("yscale", ["log", "linear"])
def test_seed_lines_draw_what_seaborn_aggregates(yscale):
    theirs, their_bands = _drawn(yscale, _seaborn)
    ours, our_bands = _drawn(yscale, _ours)
    assert len(ours) == len(theirs) == len(ORDER)
    for (x, y), (tx, ty) in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(x, tx)
        np.testing.assert_allclose(y, ty, rtol=1e-12)
    # no band for the single seed; the others span the same outline
    assert len(our_bands) == len(their_bands) == 2
    for band, theirs_band in zip(our_bands, their_bands, strict=True):
        np.testing.assert_allclose(band, theirs_band, rtol=1e-12)


def test_summary_is_the_geometric_mean_on_a_log_axis_and_spans_the_seeds():
    data = pd.DataFrame(
        {"optimizer_label": ["A"] * 3, "iteration": [1] * 3, "value": [1.0, 10.0, 100.0]}
    )
    fig, ax = plt.subplots()
    ax.set_yscale("log")
    log_row = lines.seed_summary(ax, data, "optimizer_label").iloc[0]
    ax.set_yscale("linear")
    linear_row = lines.seed_summary(ax, data, "optimizer_label").iloc[0]
    plt.close(fig)
    assert log_row["mean"] == pytest.approx(10.0, rel=1e-12)
    assert linear_row["mean"] == pytest.approx(37.0, rel=1e-12)
    for row in (log_row, linear_row):
        assert (row["min"], row["max"], row["count"]) == pytest.approx((1.0, 100.0, 3))
