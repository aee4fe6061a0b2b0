"""What the caption and the panels say about curves that nearly cover each other (issue
24), and the backend the caption names."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.figures import drawing


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
    assert drawing.coinciding(near, "log", 0.05) == [("a", "b")]
    assert drawing.coinciding(near, "log", 0.01) == []
    labels = {"a": "NGD", "b": "joint NGD"}
    assert drawing.overlap_labels({("a", "b"): ["(a)", "(c)"]}, labels) == [
        "NGD \u2248 joint NGD in (a), (c)"
    ]


def test_pairs_that_share_a_curve_join_one_group():
    pairs = [("a", "b"), ("c", "d"), ("b", "c"), ("e", "f")]
    assert drawing.coinciding_groups(pairs) == [("a", "b", "c", "d"), ("e", "f")]
    assert drawing.coinciding_groups([]) == []


def test_the_caption_names_the_backend_the_runs_record():
    kernel = {"training": {"backends": ["c"], "devices": ["cpu"]}}
    assert drawing.backend_note(kernel) == "Trained on the compiled C kernel (cpu)."
    fallback = {"training": {"backends": ["torch"], "devices": ["cpu"]}}
    assert drawing.backend_note(fallback) == "Trained on torch (cpu)."
    assert drawing.backend_note({"training": {"devices": ["cpu"]}}) == ""  # not recorded
