"""One description per figure: attnbias.figures.panels feeds both the drawing and the captions."""

import pytest

from attnbias.figures import panels

DATA = "Some data (a data model's description)."


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_every_panel_is_described_once_in_order(kind):
    text = panels.describe(kind, DATA)
    described = panels.panel_descriptions(kind)
    rows, cols = panels.LAYOUT[kind]
    spanning = int(kind == "bad_init_2d")  # its geometry panel spans two cells
    assert len(described) == rows * cols - spanning  # the caption names every panel, no more
    positions = [text.index(f"{panels.letter(i)} {d}") for i, d in enumerate(described)]
    assert positions == sorted(positions)


def test_reordering_panels_reorders_the_caption(monkeypatch):
    reordered = {**panels.PANELS, "joint": panels.PANELS["joint"][::-1]}
    monkeypatch.setattr(panels, "PANELS", reordered)
    assert panels.describe("joint", DATA).index("(a) 1 - cos(u_t, u_mm)") > 0


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_the_caption_opens_with_the_data_description_it_is_given(kind):
    """Whatever the layout: a new data model's figure is not captioned as Example 1 (the
    workflow passes the model's registry entry, attnbias.data.models.DataModel)."""
    text = panels.describe(kind, DATA)
    assert text.startswith(f"{DATA} Panels: (a) ")
    assert "Example 1" not in text and "DM" not in text


def test_unknown_kind_is_named():
    with pytest.raises(ValueError, match="'nope'"):
        panels.describe("nope", DATA)
