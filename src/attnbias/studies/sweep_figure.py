"""A sweep's figure: each metric against the swept key, and the claims' verdicts per point.

One swept axis: a panel per metric, the metric's seed summary (mean or median, as the
metric says) against the axis, one line per optimizer (the line figures' colours, dashes
and markers), a band from the smallest to the largest seed. Two axes: a heat map per
metric and optimizer. Three or more: lines against the first axis, pooled over the
others (a panel per combination would not fit a page: the CSVs keep every point). Below,
if the sweep has claims: a grid of which claim holds at
which point (tick or cross, and the seeds on which it holds), with "k/N" per claim; where
every claim holds everywhere, the caption says so instead. Every note goes to the caption
(`<name>.caption.md`), none into the image.

No torch here: this module runs in the plotting env.
"""

from __future__ import annotations

import itertools
import logging
import re
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


def wrap_label(label: str, width: int) -> str:
    """`label` on lines of about `width` characters, never breaking inside $math$."""
    lines = [""]
    for token in re.findall(r"\$[^$]*\$|[^\s$]+", label):
        if lines[-1] and len(lines[-1]) + 1 + len(token) > width:
            lines.append(token)
        else:
            lines[-1] = f"{lines[-1]} {token}".strip()
    return "\n".join(lines)


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


def _styles(algorithms: dict[str, str]) -> dict:
    """matplotlib's arguments for each optimizer ({name: algorithm_style key}): its
    algorithm's colour, marker and line style, as in every figure."""
    from attnbias.figures.algorithm_style import figure_looks

    return {
        o: {"color": lk.colour, "marker": lk.marker, "dashes": lk.dashes or (None, None)}
        for o, lk in figure_looks(algorithms).items()
    }


def _lines(
    ax, rows: pd.DataFrame, axis: dict, metric: str, optimizers, legend, styles
) -> pd.DataFrame:
    """Each optimizer's seed summary against the swept key; returns the points drawn
    (columns iteration: the x position, optimizer, value), for the coinciding check."""
    position, scale = _x_positions(axis)
    drawn = []
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
        drawn += [(x, opt, m) for x, m in zip(xs, mids, strict=True)]
        ax.plot(
            xs,
            mids,
            color=style["color"],
            marker=style["marker"],
            markeredgecolor="black",
            markeredgewidth=0.3,
            label=legend.get(opt, (opt, ""))[0],
        )
        if style["dashes"] != (None, None):
            ax.get_lines()[-1].set_dashes(style["dashes"])
        ax.fill_between(xs, lows, highs, color=style["color"], alpha=0.15, lw=0)
    ax.set_xscale(scale)
    ax.minorticks_off()  # the grid's values are the ticks
    ax.set_xticks([position[v] for v in axis["values"]], [format_value(v) for v in axis["values"]])
    return pd.DataFrame(drawn, columns=["iteration", "optimizer", "value"])


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
        # two digits: three panels share the page's width, four cells each
        ax.text(j, i, f"{value:.2g}", ha="center", va="center", color=colour)
    ax.set_xticks(range(len(xs)), xs)
    ax.set_yticks(range(len(ys)), ys)
    ax.set_xlabel(x_axis["label"])
    ax.set_ylabel(y_axis["label"])
    ax.grid(False)
    return plt.colorbar(image, ax=ax, fraction=0.05)


def _verdict_grid(ax, points: pd.DataFrame, verdicts: pd.DataFrame, axes: list[dict]) -> None:
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
            ax.text(col, row, f"{mark}{count}", ha="center", va="center")
        keys = [a["keys"][0] for a in axes]  # a point as its values; the keys label the axis
        ticks = ["/".join(format_value(v) for v in row) for row in points[keys].to_numpy()]
        ax.set_xticks(range(len(points)), ticks, rotation=90)
        ax.set_xlabel(" / ".join(a["label"] for a in axes))
    else:
        ax.set_xticks([])
        ax.set_xlabel(f"{len(points)} points, in grid order")
    texts = [textwrap.fill(t, 32) for t in verdicts["text"]]  # long ones on two lines
    ax.set_yticks(range(len(claims)), texts)
    ax.grid(False)
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    right.set_yticks(
        range(len(claims)),
        [f"{h}/{n}" for h, n in zip(verdicts["holds"], verdicts["settings"], strict=True)],
    )
    right.grid(False)


def holds_everywhere(points: pd.DataFrame, verdicts: pd.DataFrame, seeds: int) -> bool:
    """Whether every claim holds at every point, on the seed summary and on each seed: a
    grid of ticks that a sentence says as well."""
    if verdicts.empty:
        return False
    claims = list(verdicts["claim"])
    summary = points[claims].astype(bool).to_numpy().all()
    each_seed = (points[[f"{c}_seeds" for c in claims]].to_numpy() == seeds).all()
    return bool(summary and each_seed)


def _caption(
    long: pd.DataFrame,
    metrics: list[str],
    legend: dict,
    heat: bool,
    verdicts,
    everywhere: bool,
    pooled: list[str],
) -> str:
    seeds = long["seed"].nunique()
    aggregates = {registry()[m].aggregate for m in metrics}
    how = " or ".join(sorted(aggregates))
    shown = "colour and number" if heat else "lines: the"
    settings = "; ".join(f"{label}: {caption}" for label, caption in legend.values())
    if everywhere:
        judged = (
            f"Every claim holds at every point, on the seed summary and on each of the "
            f"{seeds} seeds: {'; '.join(verdicts['text'])}."
        )
    elif len(verdicts):
        judged = (
            "Verdicts (bottom): tick, the claim holds on the seed summary (cross: it does "
            "not); the number: seeds on which it holds on their own numbers; right: points "
            "where it holds."
        )
    else:
        judged = ""
    over = f"seeds and the {', '.join(pooled)} settings" if pooled else "seeds"
    return (
        f"{seeds} seeds per point; {shown} {how} over {over}"
        + ("" if heat else ", bands: smallest to largest finite seed")
        + "; no mark where that summary is not finite (a seed that never crossed makes a "
        "mean infinite)"
        + f". Lower is faster in every metric. {judged} Optimizers at the base's settings "
        f"(the grid overrides some): {settings}."
    )


def draw(
    long: pd.DataFrame,
    points: pd.DataFrame,
    verdicts: pd.DataFrame,
    *,
    axes: list[dict],
    metrics: list[str],
    legend: dict,
    algorithms: dict,
    title: str,
    outputs,
    provenance: dict | None = None,
) -> None:
    """The sweep's figure (see the module's doc) into every path of `outputs`;
    `algorithms`: optimizer -> its algorithm_style key (its look, as in every figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnbias.figures import caption as captions
    from attnbias.figures.overlap import coinciding, coinciding_groups, say_coinciding
    from attnbias.figures.save import save_figure
    from attnbias.figures.style import FULL_WIDTH, MAX_HEIGHT, apply_theme

    apply_theme()
    optimizers = [o for o in legend if o in set(long["optimizer"])]
    labels = {o: legend.get(o, (o, ""))[0] for o in optimizers}
    styles = _styles({o: algorithms[o] for o in optimizers})
    heat = len(axes) == 2
    # lines: a panel per metric; three or more axes: the first, pooled over the others
    ncols = len(optimizers) if heat else 1
    everywhere = holds_everywhere(points, verdicts, long["seed"].nunique())
    claims = len(verdicts) > 0 and not everywhere
    verdict_height = 0.3 * len(verdicts) + 1.0 if claims else 0
    room = MAX_HEIGHT - 0.4 - verdict_height  # what the page leaves the panels
    row_height = min(1.8, room / len(metrics))
    heights = [row_height] * len(metrics) + ([verdict_height] if claims else [])
    fig = plt.figure(figsize=(FULL_WIDTH, sum(heights) + 0.4), layout="constrained")
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
                ax.set_title(f"{legend[opt][0]}:\n{wrap_label(label, 28)}")
            continue
        ax = fig.add_subplot(spec[row, 0])
        if axes:
            scale = registry()[metric].scale
            drawn = _lines(ax, long, axes[0], metric, optimizers, legend, styles)
            ax.set_yscale(scale)
            ax.set_xlabel(axes[0]["label"] if row == len(metrics) - 1 else "")
            # lines that cover each other are named where they do
            say_coinciding(ax, coinciding_groups(coinciding(drawn, scale, 0.03)), labels)
        ax.set_ylabel(wrap_label(label, 30))
    if not heat:
        handles, texts = fig.axes[0].get_legend_handles_labels()
        handles = [h for h, t in zip(handles, texts, strict=True) if t in labels.values()]
        texts = [t for t in texts if t in labels.values()]
        fig.legend(handles, texts, ncol=len(texts), loc="outside upper center", frameon=False)
    if claims:
        _verdict_grid(fig.add_subplot(spec[-1, :]), points, verdicts, axes)
    pooled = [a["label"] for a in axes[1:]] if len(axes) >= 3 else []
    text = captions.compose(
        title, _caption(long, metrics, legend, heat, verdicts, everywhere, pooled)
    )
    save_figure(fig, outputs, provenance, caption=text)
