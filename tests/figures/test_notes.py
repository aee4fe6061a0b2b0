"""A metric figure's caption notes (figures.notes): the reference lines drawn, the panels
that begin late, and the backend the runs record."""

from __future__ import annotations

import math

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


def _steps(name, per_seed):
    """max_log_step_W rows: {seed: [(t, log10 step), ...]}."""
    return pd.DataFrame(
        [(name, seed, t, "max_log_step_W", v * math.log(10))
         for seed, points in per_seed.items() for t, v in points],
        columns=["optimizer", "seed", "iteration", "metric", "value"],
    )  # fmt: skip


def test_the_caption_names_each_cap_its_rule_and_where_it_bound():
    table = pd.concat([
        _steps("ngd", {0: [(10, 1.0), (100, 147.66)], 1: [(10, 1.0), (100, 131.1)]}),
        _steps("ps", {0: [(10, 3.0), (100, 308.0)], 1: [(10, 308.0), (100, 308.0)]}),
    ])  # fmt: skip
    optimizers = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "max_step": 1e148},
                  "ps": {"rule": "polyak", "eta_max": 1e308}}  # fmt: skip
    text = notes.caps_note(table, optimizers, {"ngd": "NGD", "ps": "PS"})
    assert "the paper's values were lost" in text and "attnbias.optim.cap_rule" in text
    assert "NGD's max_step 1e148 never bound (largest step 10^131.10 to 10^147.66)" in text
    assert "PS's eta_max 1e308 bound by t = 10 to 100" in text
    # control: uncapped runs get no such words
    assert notes.caps_note(table, {"ngd": {"rule": "ngd"}, "ps": {"rule": "polyak"}}, {}) == ""
