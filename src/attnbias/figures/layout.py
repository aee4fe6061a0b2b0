"""Where a metric figure's panels go: the plain layout (Grid), a figure kind's metric panels
in rows and columns, and what a layout adds to them.

A figure kind that draws more than its metric panels (App. C.1's 2-D figure,
tokens_2d.Tokens2D) is a layout of its own: it places its extra panels, may draw on a
metric panel after its curves (`decorate`) and adds its caption notes (`notes`). The
drawing (drawing.draw) asks the layout for these and knows no figure kind.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from attnbias.figures.panels import LAYOUT, Panel, first_metric_panel
from attnbias.figures.style import FULL_WIDTH

PANEL_HEIGHT = 1.9  # in, one row of panels
LEGEND_HEIGHT = 0.35  # in, the legend row above the panels


class Grid:
    """A figure kind's metric panels (panels.PANELS) in panels.LAYOUT's rows and columns,
    against t from 1, nothing else: the layout of every kind without one of its own.

    `tokens`: what a layout draws beyond the metric tables (Tokens2D's data and W_mm);
    a Grid needs none."""

    x_shift = 0  # added to t on the log axes (1: t + 1, so that t = 0 is drawn)
    needs_tokens = False  # whether the figure job must read seed 0's data and W_mm

    def __init__(self, kind: str, tokens: dict | None = None):
        self.kind = kind
        # the letter of the first metric panel: those before it are the layout's own
        self.first = first_metric_panel(kind)

    def figure(self) -> tuple:
        """The figure and the axes of its metric panels, in PANELS order."""
        rows, cols = LAYOUT[self.kind]
        fig, grid = plt.subplots(
            rows, cols, figsize=(FULL_WIDTH, PANEL_HEIGHT * rows + LEGEND_HEIGHT),
            squeeze=False, layout="constrained",
        )  # fmt: skip
        return fig, list(grid.flat)

    def decorate(self, ax, panel: Panel, data: pd.DataFrame, palette: dict) -> None:
        """Draw what metric panel `panel` shows beyond its curves (`data`, coloured by
        `palette`): nothing here."""

    def notes(self) -> list[str]:
        """The caption's notes on what the layout draws beyond the metric panels: none."""
        return []
