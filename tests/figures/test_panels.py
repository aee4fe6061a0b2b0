"""One description per figure: attnbias.figures.panels feeds both the drawing and the captions."""

import pytest

from attnbias.figures import panels

DATA = "Some data (a data model's description)."
CURVES = {"GD": "gd", "NGD": "ngd-capped", "Eq. 10": "eq10"}  # legend label -> algorithm


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_every_panel_is_described_once_in_order(kind):
    text = panels.describe(kind, DATA, CURVES)
    described = panels.panel_descriptions(kind)
    rows, cols = panels.LAYOUT[kind]
    spanning = int(kind == "bad_init_2d")  # its geometry panel spans two cells
    assert len(described) == rows * cols - spanning  # the caption names every panel, no more
    positions = [text.index(f"{panels.letter(i)} {d}") for i, d in enumerate(described)]
    assert positions == sorted(positions)


def test_reordering_panels_reorders_the_caption(monkeypatch):
    reordered = {**panels.PANELS, "joint": panels.PANELS["joint"][::-1]}
    monkeypatch.setattr(panels, "PANELS", reordered)
    assert panels.describe("joint", DATA, CURVES).index("(a) 1 - cos(u_t, u_mm)") > 0


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_the_caption_opens_with_the_data_description_it_is_given(kind):
    """Whatever the layout: a new data model's figure is not captioned as Example 1 (the
    workflow passes the model's registry entry, attnbias.data.models.DataModel)."""
    text = panels.describe(kind, DATA, CURVES)
    assert text.startswith(f"{DATA} Panels: (a) ")
    assert "Example 1" not in text and "DM" not in text


def test_unknown_kind_is_named():
    with pytest.raises(ValueError, match="'nope'"):
        panels.describe("nope", DATA, CURVES)


def test_a_rate_starts_on_the_curve_of_its_algorithm_by_label():
    """A rate names the legend label of the optimizer that is its algorithm (NGD capped or
    not), whatever the config calls it, and is left out where no optimizer is."""
    text = panels.describe("fixed_decoder", DATA, {"GD": "gd", "fast NGD": "ngd-capped"})
    assert "(e) t^-3/4 (Thm. 1), starting on fast NGD's curve." in text
    assert "Rates" not in panels.describe("fixed_decoder", DATA, {"GD": "gd"})
    two_token = panels.describe("two_token", DATA, {"GD": "gd"})
    assert "1/log^2 t, starting on GD's curve" in two_token and "t^-2" not in two_token
