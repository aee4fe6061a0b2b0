"""Panels drawn from log10 values (figures.log_axes): the axis stops above a curve that
falls far deeper than the others, which leaves it marked, and the caption says where it
leaves and how low it ends."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from attnbias.figures import log_axes

T = np.unique(np.geomspace(1, 1e4, 30).astype(int))


def _table(ends: dict) -> pd.DataFrame:
    """log10 curves falling linearly in ln t to `ends` (optimizer -> last value), 2 seeds."""
    rows = [
        (name, seed, t, end * np.log(t) / np.log(T[-1]) * (1 + 0.01 * seed))
        for name, end in ends.items()
        for seed in (0, 1)
        for t in T
    ]
    return pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "value"])


def test_a_curve_far_below_the_others_leaves_the_axis_marked():
    data = _table({"gd": -2.0, "ps": -4.0, "ngd": -400.0})
    low, high = log_axes.axis_floor(data)
    ends = data[data["iteration"] == T[-1]].groupby("optimizer")["value"].mean()
    assert ends["ngd"] < low < ends["ps"] < ends["gd"] < high
    fig, ax = plt.subplots()
    colours = {"gd": "C0", "ps": "C1", "ngd": "C2"}
    left = log_axes.mark_below(ax, data, low, colours)
    plt.close(fig)
    assert [name for name, *_ in left] == ["ngd"]  # only the deep one leaves
    name, t, last, end = left[0]
    assert last == T[-1] and end == pytest.approx(ends["ngd"])
    (note,) = log_axes.below_notes(left, "(b)", {"ngd": "NGD"}, x_shift=1)
    assert note == (
        f"In (b), NGD leaves the axis at t = {t - 1:,} (\u25bc) and reaches "
        f"10^{end:.1f} at t = {last - 1:,}."
    )


def test_curves_of_like_depth_keep_the_whole_axis():
    assert log_axes.axis_floor(_table({"gd": -2.0, "ps": -30.0})) is None  # within 20x
    assert log_axes.axis_floor(_table({"gd": -0.5, "ngd": -400.0})) is None  # one deep curve
