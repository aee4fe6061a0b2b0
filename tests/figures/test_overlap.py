"""Curves that nearly cover each other: which are named, and how they are
grouped and worded in the panels and the caption (figures.overlap)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.figures import overlap


def _table(curves: dict) -> pd.DataFrame:
    t = np.arange(1, 11)
    rows = [
        {"iteration": i, "optimizer": name, "value": v}
        for name, values in curves.items()
        for i, v in zip(t, values, strict=True)
    ]
    return pd.DataFrame(rows)


def test_curves_within_the_height_fraction_are_named_and_apart_ones_not():
    base = np.geomspace(1, 1e4, 10)
    near = _table({"a": base, "b": base * 10**0.1, "c": base * 10**0.5})
    # span 4.5 decades: b is 0.1 decade (2%) from a, c 0.5 decade (11%)
    assert overlap.coinciding(near, "log", 0.05) == [("a", "b")]
    assert overlap.coinciding(near, "log", 0.01) == []
    labels = {"a": "NGD", "b": "joint NGD"}
    assert overlap.overlap_labels({("a", "b"): ["(a)", "(c)"]}, labels) == [
        "NGD \u2248 joint NGD in (a), (c)"
    ]
    note = overlap.overlap_note({("a", "b"): ["(a)", "(c)"]}, labels)
    assert note.startswith("Curves whose means lie within 5% of a panel's height")
    assert note.endswith(": NGD \u2248 joint NGD in (a), (c).")


def test_pairs_that_share_a_curve_join_one_group():
    pairs = [("a", "b"), ("c", "d"), ("b", "c"), ("e", "f")]
    assert overlap.coinciding_groups(pairs) == [("a", "b", "c", "d"), ("e", "f")]
    assert overlap.coinciding_groups([]) == []


def test_curves_orders_of_magnitude_apart_are_never_joined():
    """fig2_uncapped (f): on a panel spanning 4,000 decades, 5% of its height is
    200 decades, and GD's step (1) and NGD's (up to 10^134) were named 'GD ≈ NGD'. Drawn
    from log10 values ("decades") or on a log axis, curves join only within a factor 2."""
    t = np.arange(1, 11)
    decades = _table({"gd": 0 * t, "ngd": 134 * t / 10, "ps": 4000 * t / 10})
    assert overlap.coinciding(decades, "decades", 0.05) == []
    # the same curves, the far one left out: 134 decades is now the whole height
    assert overlap.coinciding(decades[decades["optimizer"] != "ps"], "decades", 0.05) == []
    # the planted case's control: the height rule alone joined them
    assert overlap.coinciding(decades, "linear", 0.05) == [("gd", "ngd")]
    close = _table({"gd": 0 * t, "ngd": 0.2 * t / 10, "ps": 4000 * t / 10})
    assert overlap.coinciding(close, "decades", 0.05) == [("gd", "ngd")]


def test_close_curves_are_judged_on_their_geometric_means_as_drawn():
    """Two seeds at 1 and 100 are drawn at 10 on a log axis (their geometric mean), on a
    curve at 10: joined; their arithmetic mean, 50.5, would be a factor 5 off."""
    rows = [
        {"iteration": i, "optimizer": name, "seed": seed, "value": v * 10.0**-i}
        for i in range(1, 6)
        for name, seed, v in (("a", 0, 1.0), ("a", 1, 100.0), ("b", 0, 10.0), ("c", 0, 1e-9))
    ]
    data = pd.DataFrame(rows)
    assert overlap.coinciding(data, "log", 0.05) == [("a", "b")]
    means = overlap.drawn_means(data, "log")
    np.testing.assert_allclose(means["a"], means["b"], rtol=1e-12)


def test_curves_below_the_axis_are_on_its_edge_for_the_height_not_for_the_factor():
    """Two curves that leave a log10 panel's bottom edge are drawn on it: close for the
    height, but 16 decades apart in value, so not joined."""
    t = np.arange(1, 11)
    data = _table({"a": -5.0 * t, "b": -6.6 * t, "c": 0 * t})
    limits = (-4.0, 0.5)
    assert overlap.coinciding(data, "linear", 0.05, limits) == [("a", "b")]
    assert overlap.coinciding(data, "decades", 0.05, limits) == []


def test_a_long_group_is_named_on_lines_that_fit_its_panel():
    names = ["SGD lr 0.3", "SGD lr 0.03", "SNGD lr 0.03", "SPS eta_max 1", "SPS eta_max 0.3"]
    text = overlap._wrapped(names)
    assert all(len(line) <= overlap.PANEL_TEXT_WIDTH for line in text.splitlines())
    assert text.replace("\n", " ") == " \u2248 ".join(names)
    assert overlap._wrapped(["NGD", "PS"]) == "NGD \u2248 PS"
