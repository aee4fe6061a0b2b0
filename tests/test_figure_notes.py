"""What the footnote says about the axes: log10 panels that span decades drawn as -log10 on
a log axis, and curves that nearly cover each other (issue 24)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.figures import drawing
from attnbias.figures.panels import PANELS

LOG10_1M_SOFTMAX = PANELS["fixed_decoder"][3]


def _table(curves: dict) -> pd.DataFrame:
    t = np.arange(1, 11)
    rows = [
        {"iteration": i, "optimizer": name, "value": v}
        for name, values in curves.items()
        for i, v in zip(t, values, strict=True)
    ]
    return pd.DataFrame(rows)


def test_negative_log10_values_spanning_decades_are_drawn_negated_on_a_log_axis():
    spread = _table({"gd": -np.linspace(0.1, 2, 10), "ngd": -np.geomspace(0.1, 400, 10)})
    assert drawing._y_scale(LOG10_1M_SOFTMAX, spread) == "neglog"
    assert drawing._negated(r"$\log_{10} L$") == r"$-\log_{10} L$"


def test_values_of_both_signs_stay_symlog_and_close_ends_stay_linear():
    mixed = _table({"gd": np.linspace(-2, 3, 10), "ngd": -np.geomspace(0.1, 400, 10)})
    assert drawing._y_scale(LOG10_1M_SOFTMAX, mixed) == "symlog"
    close = _table({"gd": -np.linspace(0.1, 2, 10), "ngd": -np.linspace(0.1, 8, 10)})
    assert drawing._y_scale(LOG10_1M_SOFTMAX, close) == "linear"


def test_curves_within_the_height_fraction_are_named_and_apart_ones_not():
    base = np.geomspace(1, 1e4, 10)
    near = _table({"a": base, "b": base * 10**0.1, "c": base * 10**0.5})
    # span 4.5 decades: b is 0.1 decade (2%) from a, c 0.5 decade (11%)
    assert drawing.coinciding(near, "log", 0.05) == [("a", "b")]
    assert drawing.coinciding(near, "log", 0.01) == []
    notes = drawing._overlap_notes({("a", "b"): ["(a)", "(c)"]}, {"a": "NGD", "b": "joint NGD"})
    assert notes and "NGD and joint NGD lie within 5%" in notes[0] and "(a), (c)" in notes[0]


def test_the_footnote_names_the_backend_the_runs_record():
    kernel = {"training": {"backends": ["c"], "devices": ["cpu"]}}
    assert drawing.backend_note(kernel) == "Trained on the compiled C kernel (cpu)."
    fallback = {"training": {"backends": ["torch"], "devices": ["cpu"]}}
    assert drawing.backend_note(fallback) == "Trained on torch (cpu)."
    assert drawing.backend_note({"training": {"devices": ["cpu"]}}) == ""  # not recorded
