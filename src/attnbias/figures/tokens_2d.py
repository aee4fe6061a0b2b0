"""App. C.1's 2-D figure (layout bad_init_2d): the tokens and the keys that score them
under W0 and W_mm (the tokens panel, over the first column's two rows), beside the
generic metric panels against t + 1 on a log axis, so that t = 0 is drawn; the softmax
panels mark 1/T and each curve's dip."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from attnbias.figures.layout import LEGEND_HEIGHT, PANEL_HEIGHT, Grid
from attnbias.figures.panels import Panel, letter
from attnbias.figures.style import FULL_WIDTH

SAMPLE_MARKERS = ("o", "s")  # sample 1, sample 2 in the tokens panel


class Tokens2D(Grid):
    """The tokens panel (a), then the metric panels of `kind`; `tokens`: seed 0's data
    file contents plus its `W_mm`."""

    x_shift = 1
    needs_tokens = True

    def __init__(self, kind: str, tokens: dict | None = None):
        if tokens is None:
            raise ValueError(f"figure kind {kind} needs `tokens` (the data and W_mm of seed 0)")
        super().__init__(kind)
        self.tokens = tokens

    def figure(self) -> tuple:
        fig = plt.figure(
            figsize=(FULL_WIDTH, 2 * PANEL_HEIGHT + LEGEND_HEIGHT + 0.3), layout="constrained"
        )
        spec = fig.add_gridspec(2, 3, width_ratios=[1.2, 1, 1])
        tokens_ax = fig.add_subplot(spec[:, 0])
        tokens_panel(tokens_ax, self.tokens)
        tokens_ax.set_title(letter(0), loc="left", fontweight="bold")
        return fig, [fig.add_subplot(spec[r, c]) for r in range(2) for c in (1, 2)]

    def decorate(self, ax, panel: Panel, data: pd.DataFrame, palette: dict) -> None:
        """The softmax panels: 1/T dotted, and a star at each curve's minimum where it comes
        after t = 0 (the dip the bad start causes)."""
        if not panel.metric.startswith("opt_softmax_"):
            return
        ax.axhline(1 / self.tokens["X"].shape[1], color="black", ls=":", lw=0.8)
        ax.set_ylim(0, 1.02)
        means = data.groupby(["optimizer_label", "iteration"])["value"].mean()
        for label, curve in means.groupby(level="optimizer_label"):
            curve = curve.droplevel("optimizer_label")
            if curve.idxmin() > curve.index.min():
                ax.plot(
                    curve.idxmin(), curve.min(), "*", color=palette[label], mec="black",
                    mew=0.5, ms=8, zorder=5,
                )  # fmt: skip

    def notes(self) -> list[str]:
        T = self.tokens["X"].shape[1]
        return [
            f"Here ||W_0||_F = {np.linalg.norm(self.tokens['W0']):.3g} and 1/T = {1 / T:.3g}. "
            "The t axes show t + 1 on a log scale, so that t = 0 is drawn."
        ]


def tokens_panel(ax, tokens: dict) -> None:
    """App. C.1's left plot: the tokens, and the key W x_{i,1} that scores sample i's tokens
    (token t's logit is <x_{i,t}, W x_{i,1}>) under W0 (dashed) and W_mm (solid)."""
    from matplotlib.patches import FancyArrowPatch

    X, opt, W0, W_mm = tokens["X"], tokens["opt"], tokens["W0"], tokens["W_mm"]
    n, T, d = X.shape
    if d != 2:
        raise ValueError(f"the tokens panel draws 2-D tokens; this dataset has d = {d}")
    # black and purple: not the colours of GD and NGD, the optimizers App. C.1 draws
    # (algorithm_style), apart for colour-blind readers and in grayscale (the samples also
    # differ by marker)
    colors = ["0.1", sns.color_palette("colorblind")[4]]
    points = [np.zeros(2)]
    for i in range(n):
        marker, color = SAMPLE_MARKERS[i % len(SAMPLE_MARKERS)], colors[i % len(colors)]
        for t in range(T):
            x = X[i, t]
            points.append(x)
            face = color if t == opt[i] else "white"
            ax.scatter(
                *x, s=28, marker=marker, facecolors=[face], edgecolors=[color], lw=1.2, zorder=4
            )
            ax.annotate(
                f"$x_{{{i + 1},{t + 1}}}$",
                x,
                xytext=(8, 4),
                textcoords="offset points",
                color=color,
            )
        # arrows show directions: unit length for sample 1, shorter for sample 2, so that
        # nearly equal directions stay apart
        length = 1.0 - 0.3 * i
        for W, style in ((W0, (0, (4, 2))), (W_mm, "solid")):
            key = W @ X[i, 0]
            tip = length * key / np.linalg.norm(key)
            points.append(tip)
            ax.add_patch(
                FancyArrowPatch(
                    (0, 0),
                    tip,
                    arrowstyle="-|>",
                    mutation_scale=9,
                    color=color,
                    lw=1.2,
                    ls=style,
                    zorder=3,
                )
            )
    points = np.array(points)
    lo, hi = points.min(axis=0) - 0.25, points.max(axis=0) + 0.25
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.scatter([0], [0], marker="+", color="black", s=30, zorder=5)
    handles = [
        plt.Line2D(
            [],
            [],
            ls="",
            marker=SAMPLE_MARKERS[i],
            color=colors[i],
            mfc=colors[i],
            label=f"sample {i + 1} ($y = {int(tokens['y'][i]):+d}$)",
        )
        for i in range(n)
    ]
    handles += [
        plt.Line2D([], [], ls="", marker="o", color="gray", mfc="gray", label="optimal token"),
        plt.Line2D([], [], ls="", marker="o", color="gray", mfc="white", label="non-optimal"),
        plt.Line2D([], [], ls=(0, (4, 2)), color="gray", label=r"$W_0\, x_{i,1}$"),
        plt.Line2D([], [], ls="-", color="gray", label=r"$W_{mm} x_{i,1}$"),
    ]
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.08),
        ncol=2,
        columnspacing=0.8,
        handletextpad=0.3,
        frameon=False,
    )
