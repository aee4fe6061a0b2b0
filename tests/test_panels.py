"""One description per figure: attnbias.figures.panels feeds both the drawing and the captions."""

import pandas as pd
import pytest

from attnbias.data import models
from attnbias.figures import drawing, panels

# The data model each kind of figure draws in the default config (any would do: its
# description only opens the caption).
DATA_MODEL = {
    "fixed_decoder": "example1",
    "joint": "dm",
    "bad_init": "bad_direction",
    "bad_init_2d": "app_c1",
    "two_token": "two_token",
}


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_every_panel_is_described_once_in_order(kind):
    text = panels.describe(kind, DATA_MODEL[kind])
    described = panels.panel_descriptions(kind)
    rows, cols = panels.LAYOUT[kind]
    spanning = int(kind == "bad_init_2d")  # its geometry panel spans two cells
    assert len(described) == rows * cols - spanning  # the caption names every panel, no more
    positions = [text.index(f"{panels.letter(i)} {d}") for i, d in enumerate(described)]
    assert positions == sorted(positions)


def test_reordering_panels_reorders_the_caption(monkeypatch):
    reordered = {**panels.PANELS, "joint": panels.PANELS["joint"][::-1]}
    monkeypatch.setattr(panels, "PANELS", reordered)
    assert panels.describe("joint", "dm").index("(a) 1 - cos(u_t, u_mm)") > 0


@pytest.mark.parametrize("model", models.MODELS)
def test_the_caption_opens_with_the_data_models_description(model):
    text = panels.describe("fixed_decoder", model)
    assert text.startswith(models.DATA_MODELS[model].description + " Panels: (a) ")


def test_a_new_data_model_is_captioned_by_its_own_entry(monkeypatch):
    """Not by the layout: a fixed-decoder figure of new data is not called Example 1."""
    entry = models.DataModel(models.example1, "Example 1 with its noise doubled.")
    monkeypatch.setitem(models.DATA_MODELS, "noisy_example1", entry)
    assert panels.describe("fixed_decoder", "noisy_example1").startswith("Example 1 with its")
    assert panels.describe("fixed_decoder", "example1").startswith("Example 1 with a fixed")


def test_unknown_kind_and_data_model_are_named():
    with pytest.raises(ValueError, match="'nope'"):
        panels.describe("nope", "example1")
    with pytest.raises(models.DataError, match="'nope'"):
        panels.describe("fixed_decoder", "nope")


def _table():
    return pd.DataFrame({"optimizer": ["gd", "gd"], "seed": [0, 1]})


def test_caption_describes_only_the_reference_lines_drawn():
    legend = {"gd": ("GD", "GD lr=1")}
    assert "Black" not in drawing._caption(_table(), legend)
    assert "starting on the curve" in drawing._caption(_table(), legend, references={"--"})
    dashed = drawing._caption(_table(), legend, references={"--"})
    assert "Black dashed lines" in dashed and "dotted" not in dashed
    both = drawing._caption(_table(), legend, references={"--", ":"})
    assert "Black dashed and dotted lines" in both


def test_caption_names_panels_that_begin_late():
    legend = {"gd": ("GD", "GD lr=1")}
    text = drawing._caption(_table(), legend, late_starts=[("(b)", 2), ("(e)", 2)])
    assert "(b), (e) begin at t = 2" in text
