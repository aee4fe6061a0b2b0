"""One description per figure: attnbias.figures.panels feeds both the drawing and the captions."""

import pandas as pd
import pytest

from attnbias.figures import drawing, panels


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_every_panel_is_described_once_in_order(kind):
    text = panels.describe(kind)
    described = panels.panel_descriptions(kind)
    rows, cols = panels.LAYOUT[kind]
    assert len(described) == rows * cols  # the caption names every drawn panel, no more
    positions = [text.index(f"{panels.letter(i)} {d}") for i, d in enumerate(described)]
    assert positions == sorted(positions)


def test_reordering_panels_reorders_the_caption(monkeypatch):
    reordered = {**panels.PANELS, "joint": panels.PANELS["joint"][::-1]}
    monkeypatch.setattr(panels, "PANELS", reordered)
    assert panels.describe("joint").index("(a) 1 - cos(u_t, u_mm)") > 0


def test_a_data_model_may_restate_the_summary():
    assert panels.describe("fixed_decoder", "binary_digits").startswith("Binary digits")
    assert panels.describe("fixed_decoder", "example1").startswith("Example 1")


def test_unknown_kind_is_named():
    with pytest.raises(ValueError, match="'nope'"):
        panels.describe("nope")


def _ends(values):
    return pd.DataFrame(
        {
            "optimizer": [f"opt{i}" for i in range(len(values))],
            "iteration": 100,
            "value": values,
        }
    )


def test_log10_panel_turns_logarithmic_only_when_curves_end_decades_apart():
    panel = panels.PANELS["fixed_decoder"][1]  # log10 excess loss, linear axis
    # all negative: -log10 on a log axis; with a positive value: symlog
    assert drawing._y_scale(panel, _ends([-1.7, -5.7, -7.6, -400.0])) == "neglog"
    assert drawing._y_scale(panel, _ends([0.5, -5.7, -7.6, -400.0])) == "symlog"
    assert drawing._y_scale(panel, _ends([-3.0, -13.0, -14.0])) == "linear"
    assert drawing._y_scale(panel, _ends([0.0, 200.0])) == "linear"  # one curve beyond 1
    plain = panels.PANELS["fixed_decoder"][0]  # the loss itself: its own scale
    assert drawing._y_scale(plain, _ends([-1.0, -400.0])) == plain.yscale


def _table():
    return pd.DataFrame({"optimizer": ["gd", "gd"], "seed": [0, 1]})


def test_caption_describes_only_the_reference_lines_drawn():
    legend = {"gd": ("GD", "GD lr=1")}
    assert "Black" not in drawing._caption(_table(), legend)
    dashed = drawing._caption(_table(), legend, references={"--"})
    assert "Black dashed lines" in dashed and "dotted" not in dashed
    both = drawing._caption(_table(), legend, references={"--", ":"})
    assert "Black dashed and dotted lines" in both


def test_caption_names_panels_that_begin_late():
    legend = {"gd": ("GD", "GD lr=1")}
    text = drawing._caption(_table(), legend, late_starts=[("(b)", 2), ("(e)", 2)])
    assert "(b), (e) begin at t = 2" in text
