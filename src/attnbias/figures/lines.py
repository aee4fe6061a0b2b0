"""How every figure draws an optimizer's curve: its colour, line style and marker (kept
apart where curves coincide), the mean over seeds in a band from the lowest to the highest
seed, and markers thinned along the line."""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from attnbias.figures.algorithm_style import Look
from attnbias.figures.style import FOCUS_LINE_WIDTH, LINE_WIDTH, MARKER_SIZE

MARKER_SPACING = 0.09  # fraction of the axes' diagonal


def optimizer_styles(
    looks: dict[str, Look], column: str = "optimizer_label", focus: str | None = None
) -> dict:
    """sns.lineplot arguments that draw each optimizer of `looks` ({label: its Look from
    algorithm_style, in legend order}) in its algorithm's colour, line style and marker;
    `focus` (a label) in a thicker line. Call `space_markers(ax, styles)` after plotting
    to thin the markers."""
    order = list(looks)
    return {
        "hue": column,
        "hue_order": order,
        "palette": {o: lk.colour for o, lk in looks.items()},
        "style": column,
        "style_order": order,
        "dashes": {o: lk.dashes for o, lk in looks.items()},
        "markers": {o: lk.marker for o, lk in looks.items()},
        "size": column,
        "size_order": order,
        "sizes": {o: FOCUS_LINE_WIDTH if o == focus else LINE_WIDTH for o in order},
        "markersize": MARKER_SIZE,
        "markeredgewidth": 0,
    }


def seed_summary(ax, data: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per (`column`, iteration) of `data`: the mean of `value` over seeds and its band, the
    smallest and the largest seed, as seaborn's lineplot with estimator="mean" and
    errorbar=("pi", 100) computes them: in the axis' own coordinate (log10 on a log axis,
    so a geometric mean there), then mapped back. One grouped reduction, where seaborn
    calls a Python aggregator per iteration (seconds per figure)."""
    transform = ax.yaxis.get_transform()
    frame = data[[column, "iteration"]].assign(y=transform.transform(data["value"].to_numpy(float)))
    frame = frame.dropna(subset=["y"])
    summary = (
        frame.groupby([column, "iteration"], observed=True, sort=True)["y"]
        .agg(["mean", "min", "max", "count"])
        .reset_index()
    )
    back = transform.inverted()
    for stat in ("mean", "min", "max"):
        summary[stat] = back.transform(summary[stat].to_numpy(float))
    return summary


def seed_lines(ax, data: pd.DataFrame, styles: dict, legend: bool, **line_kwargs) -> None:
    """Each optimizer's mean over seeds against the iteration, in a band from the lowest to
    the highest seed (every figure draws its curves this way): `styles` from
    optimizer_styles, its palette a dict."""
    column = styles["hue"]
    summary = seed_summary(ax, data, column)
    sns.lineplot(
        data=summary.rename(columns={"mean": "value"}),
        x="iteration",
        y="value",
        **styles,
        estimator=None,
        ax=ax,
        legend=legend,
        **line_kwargs,
    )
    # seaborn's band: the line's colour at alpha 0.2, under the lines (zorder 1 < 2), in
    # legend order; an optimizer with a single seed has none
    for label in styles["hue_order"]:
        band = summary[summary[column] == label]
        if len(band) and band["count"].max() > 1:
            ax.fill_between(
                band["iteration"], band["min"], band["max"], color=styles["palette"][label],
                alpha=0.2,
            )  # fmt: skip


def space_markers(ax, styles: dict) -> None:
    """Thin each optimizer's markers (`styles` from optimizer_styles) to one per
    MARKER_SPACING of the axes' diagonal, the start offset by curve so that markers of
    coinciding curves alternate."""
    markers = set(styles["markers"].values())
    curves = [ln for ln in ax.get_lines() if ln.get_marker() in markers and len(ln.get_xdata()) > 1]
    for k, line in enumerate(curves):
        line.set_markevery((MARKER_SPACING * (k + 0.5) / len(curves), MARKER_SPACING))
