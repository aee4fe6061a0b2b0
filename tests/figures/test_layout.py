"""Where a figure's panels go (figures.layout, figures.tokens_2d): a plain grid of metric
panels, or App. C.1's tokens panel beside them; the drawing asks the kind's layout
(drawing.LAYOUTS) and names no kind itself.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnbias.figures import drawing, panels
from attnbias.figures.layout import Grid


def test_a_grid_has_an_axis_per_metric_panel():
    for kind in panels.PANELS:
        if kind in drawing.LAYOUTS:
            continue
        fig, axes = Grid(kind).figure()
        plt.close(fig)
        assert len(axes) == len(panels.PANELS[kind]) == len(fig.axes)


def _two_token_table() -> pd.DataFrame:
    t = np.unique(np.geomspace(1, 1e3, 20).astype(int))
    rows = [
        (name, 0, it, panel.metric, float((it + 1.0) ** -rate))
        for name, rate in (("gd", 0.5), ("ngd", 2.0))
        for panel in panels.PANELS["two_token"]
        for it in t
    ]
    return pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])


def test_a_kind_gets_the_layout_the_registry_names(monkeypatch, tmp_path):
    """A layout of one's own, registered for a kind, places its panels and adds its notes:
    nothing in the drawing changes."""

    class Noted(Grid):
        def notes(self):
            return ["A layout's own note."]

    monkeypatch.setitem(drawing.LAYOUTS, "two_token", Noted)
    monkeypatch.setattr(drawing, "save_figure", lambda *args, **kwargs: plt.close(args[0]))
    legend = {"gd": ("GD", "GD lr=1"), "ngd": ("NGD", "NGD lr=0.1")}
    algorithms = {"gd": "gd", "ngd": "ngd"}
    caption = drawing.draw(
        "two_token",
        _two_token_table(),
        title="t",
        legend=legend,
        algorithms=algorithms,
        outputs=[tmp_path / "x.png"],
    )
    assert "A layout's own note." in caption
    monkeypatch.delitem(drawing.LAYOUTS, "two_token")
    caption = drawing.draw(
        "two_token",
        _two_token_table(),
        title="t",
        legend=legend,
        algorithms=algorithms,
        outputs=[tmp_path / "x.png"],
    )
    assert "A layout's own note." not in caption
