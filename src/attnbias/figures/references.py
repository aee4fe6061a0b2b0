"""The rates the paper states, drawn as reference lines: each starts on the mean curve of
the optimizer it is proved for and shows a slope, not a fit (panels.Reference says which
rate a panel draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.figures.lines import seed_summary
from attnbias.figures.panels import Reference
from attnbias.figures.style import MIN_FONT_PT

SHAPES = {
    "t": lambda t: t,
    "log t": np.log,
    "t^-3/4": lambda t: t**-0.75,
    "t^-2": lambda t: t**-2.0,
    "1/log t": lambda t: 1.0 / np.log(t),
    "1/log^2 t": lambda t: 1.0 / np.log(t) ** 2,
}
REFERENCE_STYLES = ("--", ":")  # a panel's first and second rate
REFERENCE_NAMES = {"--": "dashed", ":": "dotted"}


def draw_reference(
    ax, curve_data: pd.DataFrame, ref: Reference, t_max: int, style: str, in_log10: bool
) -> bool:
    """The rate `ref` from the point at anchor * t_max of the curve of `curve_data` (one
    optimizer's rows) to where it leaves the panel (or t_max), labelled at that end.
    `in_log10`: the panel draws log10 values."""
    # the optimizer's line as seed_lines drew it (a geometric mean on a log axis)
    drawn = seed_summary(ax, curve_data, "optimizer")
    curve = drawn.set_index("iteration")["mean"]
    curve = curve[curve.index > 1]
    if curve.empty:
        return False
    t0 = curve.index[np.argmin(np.abs(curve.index - max(ref.anchor * t_max, 2)))]
    shape = SHAPES[ref.shape]
    t = np.geomspace(t0, t_max, 80)
    ratio = shape(t) / shape(t0)
    y = curve[t0] + np.log10(ratio) if in_log10 else curve[t0] * ratio
    lo, hi = ax.get_ylim()  # the curves' range: the rate must not stretch it
    inside = (y >= lo) & (y <= hi)
    stop = len(y) if inside.all() else max(int(np.argmin(inside)), 2)
    ax.plot(t[:stop], y[:stop], ls=style, color="black", lw=0.9, zorder=5)
    # the label on the side of the line away from where the curves come from: above a
    # rising rate, below a falling one
    falling = y[stop - 1] < y[0]
    ax.annotate(
        ref.label, (t[stop - 1], y[stop - 1]), xytext=(-1, -3 if falling else 2),
        textcoords="offset points", ha="right", va="top" if falling else "bottom",
        fontsize=MIN_FONT_PT,
    )  # fmt: skip
    ax.set_ylim(lo, hi)
    return True


def references_note(styles) -> str:
    """The caption's note on the reference lines drawn (`styles`: their line styles)."""
    if not styles:
        return ""
    drawn = " and ".join(REFERENCE_NAMES[s] for s in REFERENCE_STYLES if s in styles)
    return (
        f"Black {drawn} lines: rates stated in the paper, starting on the curve of the "
        "optimizer they are proved for and labelled at their end (slopes, not fits)."
    )
