"""The two-token layout (attnbias.figures.tokens_2d): its panel first, and a softmax dip marked."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from attnbias.figures import drawing, panels
from attnbias.figures.tokens_2d import Tokens2D

# two samples of three 2-D tokens (App. C.1's has two of two: tests/figures/test_style.py)
TOKENS = {
    "X": np.array([[[0.5, 0.5], [1.0, -1.0], [0.0, 1.0]], [[0.0, 0.5], [1.0, -0.5], [-1.0, 0.0]]]),
    "opt": np.array([1, 2]),
    "y": np.array([1.0, -1.0]),
    "W0": np.array([[0.0, 1.0], [2.0, 0.0]]),
    "W_mm": np.array([[1.0, 0.0], [0.0, 1.0]]),
}


def test_the_tokens_layout_puts_its_panel_first_and_needs_the_tokens():
    with pytest.raises(ValueError, match="needs `tokens`"):
        Tokens2D("bad_init_2d")
    layout = Tokens2D("bad_init_2d", TOKENS)
    fig, axes = layout.figure()
    plt.close(fig)
    assert len(axes) == len(panels.PANELS["bad_init_2d"])
    assert fig.axes[0] not in axes and fig.axes[0].get_title(loc="left") == "(a)"
    assert (layout.first, layout.x_shift) == (1, 1)  # letters from (b), t + 1 on the axes
    # the figure job reads seed 0's data and W_mm for this layout only
    assert drawing.layout_of("bad_init_2d").needs_tokens
    assert not any(drawing.layout_of(k).needs_tokens for k in panels.PANELS if k != "bad_init_2d")
    assert layout.notes() == [
        "Here ||W_0||_F = 2.24 and 1/T = 0.333. The t axes show t + 1 on a log scale, so that "
        "t = 0 is drawn."
    ]


def test_the_tokens_layout_marks_a_softmax_dip():
    layout = Tokens2D("bad_init_2d", TOKENS)
    softmax, gap = panels.PANELS["bad_init_2d"][0], panels.PANELS["bad_init_2d"][2]
    data = pd.DataFrame({"optimizer_label": "GD", "iteration": [1, 2, 3], "value": [0.4, 0.2, 0.9]})
    fig, ax = plt.subplots()
    layout.decorate(ax, gap, data, {"GD": "C0"})  # not a softmax panel: nothing
    assert not ax.get_lines()
    layout.decorate(ax, softmax, data, {"GD": "C0"})
    plt.close(fig)
    stars = [ln for ln in ax.get_lines() if ln.get_marker() == "*"]
    assert [(ln.get_xdata()[0], ln.get_ydata()[0]) for ln in stars] == [(2, 0.2)]
    assert ax.get_ylim() == (0, 1.02)
    assert [ln.get_ydata()[0] for ln in ax.get_lines()][0] == pytest.approx(1 / 3)  # 1/T
