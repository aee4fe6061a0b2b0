"""Saving a figure (attnbias.figures.save)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from PIL import Image

from attnbias.figures.save import save_figure
from attnbias.figures.style import FULL_WIDTH, apply_theme

matplotlib.use("Agg")


@pytest.mark.parametrize("order", [("pdf", "png"), ("png", "pdf")])
def test_the_png_keeps_long_tick_labels_inside_its_edge(order, tmp_path):
    """The sweep figure's claims strip, as saved: long labels left of a wide strip. Its
    layout was solved on the PDF, whose text is narrower than the PNG's, and the PNG lost
    the labels' first letters at the left edge; the layout is solved on the PNG now,
    whatever order the outputs are given in."""
    import matplotlib.pyplot as plt

    apply_theme()
    fig = plt.figure(figsize=(FULL_WIDTH, 3), layout="constrained")
    ax = fig.add_subplot()
    ax.imshow(np.zeros((8, 27)), aspect="auto")
    ax.set_yticks(range(8), ["gd slowest in final_log10_gap_W"] * 8)
    save_figure(fig, [tmp_path / f"fig.{suffix}" for suffix in order])
    pixels = np.asarray(Image.open(tmp_path / "fig.png").convert("L"))
    assert pixels[:, :2].min() == 255  # nothing drawn at (or cut by) the left edge
