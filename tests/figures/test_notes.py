"""A metric figure's caption notes (figures.notes): the reference lines drawn, the panels
that begin late, and the backend the runs record."""

from __future__ import annotations

import pandas as pd

from attnbias.figures import notes

LEGEND = {"gd": ("GD", "GD lr=1")}


def _table():
    return pd.DataFrame({"optimizer": ["gd", "gd"], "seed": [0, 1]})


def test_caption_describes_only_the_reference_lines_drawn():
    assert "Black" not in notes.notes(_table(), LEGEND)
    assert "starting on the curve" in notes.notes(_table(), LEGEND, references={"--"})
    dashed = notes.notes(_table(), LEGEND, references={"--"})
    assert "Black dashed lines" in dashed and "dotted" not in dashed
    both = notes.notes(_table(), LEGEND, references={"--", ":"})
    assert "Black dashed and dotted lines" in both


def test_caption_names_panels_that_begin_late():
    text = notes.notes(_table(), LEGEND, late_starts=[("(b)", 2), ("(e)", 2)])
    assert "(b), (e) begin at t = 2" in text


def test_the_caption_names_the_backend_the_runs_record():
    kernel = {"training": {"backends": ["c"], "devices": ["cpu"]}}
    assert notes.backend_note(kernel) == "Trained on the compiled C kernel (cpu)."
    fallback = {"training": {"backends": ["torch"], "devices": ["cpu"]}}
    assert notes.backend_note(fallback) == "Trained on torch (cpu)."
    assert notes.backend_note({"training": {"devices": ["cpu"]}}) == ""  # not recorded
