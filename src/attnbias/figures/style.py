"""The figures' print style: page sizes, fonts, line widths.

Every figure is drawn at the size it is printed (a full text width or a column), so its
fonts are their printed size: no figure is shrunk by the page, and no text is smaller than
MIN_FONT_PT. Each algorithm's colour, marker and line style, the same in every figure, are
in algorithm_style.
"""

from __future__ import annotations

import seaborn as sns

FULL_WIDTH = 7.0  # in: a figure across the text width
COLUMN_WIDTH = 3.5  # in: a figure in one column
MAX_HEIGHT = 9.0  # in: the tallest figure a page holds
MIN_FONT_PT = 7.0  # the smallest text in any figure, at print size
FONT_PT = 8.0  # axis labels, panel letters
LINE_WIDTH = 1.1  # pt: an optimizer's curve
FOCUS_LINE_WIDTH = 1.9  # pt: the curve of the algorithm a figure is about
MARKER_SIZE = 3.5  # pt

RC = {
    "font.size": FONT_PT,
    "axes.labelsize": FONT_PT,
    "axes.titlesize": FONT_PT,
    "xtick.labelsize": MIN_FONT_PT,
    "ytick.labelsize": MIN_FONT_PT,
    "legend.fontsize": MIN_FONT_PT,
    "legend.title_fontsize": MIN_FONT_PT,
    "figure.titlesize": FONT_PT,
    "lines.linewidth": LINE_WIDTH,
    "lines.markersize": MARKER_SIZE,
    "axes.linewidth": 0.6,
    "grid.linewidth": 0.4,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.pad": 2.0,
    "ytick.major.pad": 2.0,
    "axes.labelpad": 2.0,
    "legend.handlelength": 2.6,
    # math at the text's size: a tick's exponent stays legible
    "mathtext.default": "regular",
    "pdf.fonttype": 42,  # TrueType: the PDF's text stays text (searchable, measurable)
}


def apply_theme() -> None:
    """seaborn's paper style with the print sizes above."""
    sns.set_theme(context="paper", style="whitegrid", rc=RC)


# solid, dashed, dash-dot, dotted (and more), as seaborn dash specs: for curves that are
# not algorithms (a model's layers); an algorithm's look is algorithm_style's
LINE_STYLES = ("", (5, 2), (6, 2, 1, 2), (1.5, 1.5), (8, 3, 2, 3, 2, 3), (3, 3))
