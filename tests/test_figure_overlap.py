"""Curves that nearly cover each other (issue 24): which are named, and how they are
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
