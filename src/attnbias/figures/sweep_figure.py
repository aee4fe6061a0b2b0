"""A sweep's figure: each metric against the swept key, and the claims' verdicts per point.

One swept axis: a panel per metric, the metric's seed summary (mean or median, as the
metric says) against the axis, one line per optimizer (the line figures' colours, dashes
and markers), a band from the smallest to the largest seed. Two axes: a heat map per
metric and optimizer. Three or more: lines against the first axis, a column of panels per
combination of the others. Below, if the sweep has claims: a grid of which claim holds at
which point (tick or cross, and the seeds on which it holds), with "k/N" per claim.

No torch here: this module runs in the plotting env.
"""

from __future__ import annotations

import itertools
import logging
import textwrap

import numpy as np
import pandas as pd

from attnbias.studies.sweep_grid import format_value
from attnbias.studies.sweep_metrics import registry

MAX_ANNOTATED = 60  # points beyond which the verdict grid drops its per-cell text


def title(name: str, base: str, axes: list[dict]) -> str:
    swept = ", ".join(a["label"] for a in axes) or "no swept key"
    return f"Sweep {name}: experiment {base} over {swept}"


def log_verdicts(verdicts: pd.DataFrame) -> None:
    logging.info("claims:\n%s", verdicts[["claim", "text", "verdict"]].to_string(index=False))


def _numeric(values: list) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


UNEVEN = 3.0  # largest over smallest step between sorted values: above it, grid order


def _x_positions(axis: dict) -> tuple[dict, str]:
    """Axis value -> x, and the x scale: numbers as they are (log where they span a decade
    or more and are positive); in grid order where the values are spaced so unevenly on
    that scale that some would crowd (caps 1e2, 1e4, ..., 1e150), or are not numbers."""
    values = axis["values"]
    if _numeric(values) and len(set(values)) == len(values):
        positive = min(values) > 0
        scale = "log" if positive and max(values) / min(values) >= 10 else "linear"
        on_axis = np.sort(np.log10(values) if scale == "log" else np.asarray(values, float))
        steps = np.diff(on_axis)
        if len(steps) < 2 or steps.max() <= UNEVEN * steps.min():
            return {v: v for v in values}, scale
    return {v: i for i, v in enumerate(values)}, "linear"


def _formatted(column: pd.Series) -> pd.Series:
    """A key's values as the grid names them; a table holds a grid's null (uncapped) as NaN."""
    return column.map(lambda v: format_value(None if isinstance(v, float) and np.isnan(v) else v))


def _summary(values: pd.Series, metric: str) -> float:
    return getattr(values, registry()[metric].aggregate)()


def _styles(optimizers: list[str]) -> dict:
    from attnbias.figures.drawing import LINE_STYLES, MARKERS, optimizer_colours

    colours = optimizer_colours(len(optimizers))
    return {
        o: {
            "color": colours[i],
            "marker": MARKERS[i % len(MARKERS)],
            "dashes": LINE_STYLES[i % len(LINE_STYLES)] or (None, None),
        }
        for i, o in enumerate(optimizers)
    }


def _lines(ax, rows: pd.DataFrame, axis: dict, metric: str, optimizers, legend, styles):
    position, scale = _x_positions(axis)
    key = axis["keys"][0]
    for opt in optimizers:
        mine = rows[rows["optimizer"] == opt]
        values = mine[metric].astype(float)  # inf: not reached; NaN: diverged (skipped)
        grouped = values.groupby(_formatted(mine[key]), sort=False)
        xs, mids, lows, highs = [], [], [], []
        for value in axis["values"]:
            text = format_value(value)
            if text not in grouped.groups:
                continue
            group = grouped.get_group(text).dropna()
            finite = group[np.isfinite(group)]
            mid = _summary(group, metric) if len(group) else np.nan
            if not np.isfinite(mid):  # as the points' table: e.g. a seed that never crossed
                continue
            xs.append(position[value])
            mids.append(mid)
            lows.append(finite.min())
            highs.append(finite.max())
        style = styles[opt]
        ax.plot(
            xs,
            mids,
            color=style["color"],
            marker=style["marker"],
            markersize=4.5,
            markeredgecolor="black",
            markeredgewidth=0.3,
            lw=1.4,
            label=legend.get(opt, (opt, ""))[0],
        )
        if style["dashes"] != (None, None):
            ax.get_lines()[-1].set_dashes(style["dashes"])
        ax.fill_between(xs, lows, highs, color=style["color"], alpha=0.15, lw=0)
    ax.set_xscale(scale)
    ax.minorticks_off()  # the grid's values are the ticks
    ax.set_xticks([position[v] for v in axis["values"]], [format_value(v) for v in axis["values"]])


def _heat(ax, points: pd.DataFrame, axes: list[dict], metric: str, opt: str, limits):
    import matplotlib.pyplot as plt

    x_axis, y_axis = axes
    table = points.assign(
        _x=_formatted(points[x_axis["keys"][0]]),
        _y=_formatted(points[y_axis["keys"][0]]),
    ).pivot(index="_y", columns="_x", values=f"{metric}_{opt}")
    xs = [format_value(v) for v in x_axis["values"]]
    ys = [format_value(v) for v in y_axis["values"]]
    grid = table.reindex(index=ys, columns=xs).to_numpy(dtype=float)
    shown = np.where(np.isfinite(grid), grid, np.nan)
    image = ax.imshow(
        shown, origin="lower", aspect="auto", cmap="viridis", vmin=limits[0], vmax=limits[1]
    )
    for (i, j), value in np.ndenumerate(grid):
        light = image.norm(value) > 0.6 if np.isfinite(value) else False  # viridis' yellows
        colour = "black" if light else "white"
        ax.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=7, color=colour)
    ax.set_xticks(range(len(xs)), xs, fontsize=7)
    ax.set_yticks(range(len(ys)), ys, fontsize=7)
    ax.set_xlabel(x_axis["label"])
    ax.set_ylabel(y_axis["label"])
    ax.grid(False)
    return plt.colorbar(image, ax=ax, fraction=0.05)


def _verdict_grid(ax, points: pd.DataFrame, verdicts: pd.DataFrame) -> None:
    import seaborn as sns
    from matplotlib.colors import ListedColormap

    claims = list(verdicts["claim"])
    grid = points[claims].to_numpy(dtype=float).T
    blue, orange = sns.color_palette("colorblind")[0], sns.color_palette("colorblind")[1]
    ax.imshow(
        grid,
        aspect="auto",
        cmap=ListedColormap([orange, blue]),
        vmin=0,
        vmax=1,
        alpha=0.55,
        interpolation="nearest",
    )
    if len(points) <= MAX_ANNOTATED:
        for (row, name), col in itertools.product(enumerate(claims), range(len(points))):
            mark = "\u2713" if grid[row, col] else "\u2717"
            count = int(points[f"{name}_seeds"].iloc[col])
            ax.text(col, row, f"{mark}{count}", ha="center", va="center", fontsize=6.5)
        ax.set_xticks(range(len(points)), points["point"], rotation=90, fontsize=6.5)
    else:
        ax.set_xticks([])
        ax.set_xlabel(f"{len(points)} points, in grid order")
    texts = [textwrap.fill(t, 32) for t in verdicts["text"]]  # long ones on two lines
    ax.set_yticks(range(len(claims)), texts, fontsize=7.5)
    ax.grid(False)
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    right.set_yticks(
        range(len(claims)),
        [f"{h}/{n}" for h, n in zip(verdicts["holds"], verdicts["settings"], strict=True)],
        fontsize=7.5,
    )
    right.grid(False)


def _caption(long: pd.DataFrame, metrics: list[str], legend: dict, heat: bool) -> str:
    seeds = long["seed"].nunique()
    aggregates = {registry()[m].aggregate for m in metrics}
    how = " or ".join(sorted(aggregates))
    shown = "colour and number" if heat else "lines: the"
    settings = "; ".join(f"{label}: {caption}" for label, caption in legend.values())
    return (
        f"{seeds} seeds per point; {shown} {how} over seeds"
        + ("" if heat else ", bands: smallest to largest finite seed")
        + "; no mark where that summary is not finite (a seed that never crossed makes a "
        "mean infinite)"
        + ". Lower is faster in every metric. Verdicts: tick, the claim holds on the seed "
        "summary (cross: it does not); the number: seeds on which it holds on their own "
        f"numbers; right: points where it holds. Optimizers at the base's settings (the grid "
        f"overrides some): {settings}."
    )


def draw(
    long: pd.DataFrame,
    points: pd.DataFrame,
    verdicts: pd.DataFrame,
    *,
    axes: list[dict],
    metrics: list[str],
    legend: dict,
    title: str,
    outputs,
    provenance: dict | None = None,
) -> None:
    """The sweep's figure (see the module's doc) into every path of `outputs`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    from attnbias.figures.drawing import save_figure

    sns.set_theme(context="paper", style="whitegrid", font_scale=1.0)
    optimizers = [o for o in legend if o in set(long["optimizer"])]
    styles = _styles(optimizers)
    heat = len(axes) == 2
    facets = [{}]
    if len(axes) >= 3:
        rest = axes[1:]
        facets = [
            {a["keys"][0]: v for a, v in zip(rest, combo, strict=True)}
            for combo in itertools.product(*(a["values"] for a in rest))
        ]
    ncols = len(optimizers) if heat else len(facets)
    claims = len(verdicts) > 0
    verdict_height = 0.28 * len(verdicts) + 1.6 if claims else 0
    heights = [2.5] * len(metrics) + ([verdict_height] if claims else [])
    width = max(7.0, (3.4 if heat else 2.6) * ncols + 2.0)
    fig = plt.figure(figsize=(width, sum(heights) + 1.8))
    spec = fig.add_gridspec(len(heights), ncols, height_ratios=heights)
    for row, metric in enumerate(metrics):
        label = registry()[metric].label
        if heat:
            values = points[[f"{metric}_{o}" for o in optimizers]].to_numpy(dtype=float)
            finite = values[np.isfinite(values)]
            limits = (finite.min(), finite.max()) if finite.size else (0, 1)
            for col, opt in enumerate(optimizers):
                ax = fig.add_subplot(spec[row, col])
                _heat(ax, points, axes, metric, opt, limits)
                ax.set_title(f"{legend[opt][0]}:\n{label}", fontsize=8)
            continue
        for col, facet in enumerate(facets):
            ax = fig.add_subplot(spec[row, col])
            rows = long
            for key, value in facet.items():
                rows = rows[_formatted(rows[key]) == format_value(value)]
            if axes:
                _lines(ax, rows, axes[0], metric, optimizers, legend, styles)
                ax.set_yscale(registry()[metric].scale)
                ax.set_xlabel(axes[0]["label"] if row == len(metrics) - 1 else "")
            ax.set_ylabel(label if col == 0 else "", fontsize=8)
            if row == 0 and facet:
                names = {a["keys"][0]: a["label"] for a in axes}
                text = ", ".join(f"{names[k]}={format_value(v)}" for k, v in facet.items())
                ax.set_title(text, fontsize=8)
    if not heat:
        handles, labels = fig.axes[0].get_legend_handles_labels()
        fig.legend(
            handles,
            labels,
            ncol=len(optimizers),
            loc="upper center",
            bbox_to_anchor=(0.5, 1 - 0.55 / fig.get_size_inches()[1]),
            frameon=False,
        )
    if claims:
        _verdict_grid(fig.add_subplot(spec[-1, :]), points, verdicts)
    fig.suptitle(title, fontsize="large")
    note = _caption(long, metrics, legend, heat)
    fig.text(
        0.01,
        0.005,
        "\n".join(textwrap.wrap(note, int(15 * width))),
        fontsize=7,
        va="bottom",
        ha="left",
    )
    height = fig.get_size_inches()[1]
    fig.tight_layout(rect=(0, 0.9 / height, 1, 1 - 0.7 / height))
    save_figure(fig, outputs, provenance)
