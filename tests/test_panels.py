"""One description per figure: attnbias.figures.panels feeds both the drawing and the captions."""

import pytest

from attnbias.figures import panels


@pytest.mark.parametrize("kind", sorted(panels.PANELS))
def test_every_panel_is_described_once_in_order(kind):
    text = panels.describe(kind)
    described = panels.panel_descriptions(kind)
    rows, cols = panels.LAYOUT[kind]
    spanning = int(kind == "bad_init_2d")  # its geometry panel spans two cells
    assert len(described) == rows * cols - spanning  # the caption names every panel, no more
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
