"""One seaborn figure per experiment kind, drawn from the aggregate long-format table, at
print size (attnbias.figures.style), with its caption written beside it (caption.py).

Lines are the mean over seeds (on log axes taken in log space, i.e. the geometric mean, as
seaborn's lineplot takes it); bands span the smallest to the largest seed. Every panel has
the iteration on a log axis. Reference curves are the rates the paper states, starting on
the curve of the optimizer they are proved for; they show a slope, not a fit.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

from attnbias.figures import caption as captions  # noqa: E402
from attnbias.figures.panels import FOCUS, LAYOUT, PANELS, Panel, Reference, letter  # noqa: E402
from attnbias.figures.style import (  # noqa: E402, F401 (re-exported: plots, sweep_figure)
    FOCUS_LINE_WIDTH,
    FULL_WIDTH,
    LINE_STYLES,
    LINE_WIDTH,
    MARKER_SIZE,
    MARKERS,
    MIN_FONT_PT,
    apply_theme,
    emphasis_order,
    optimizer_colours,
)
from attnbias.workflow.io import atomic_path  # noqa: E402
from attnbias.workflow.provenance import savefig, trained_on  # noqa: E402

SHAPES = {
    "t": lambda t: t,
    "log t": np.log,
    "t^-3/4": lambda t: t**-0.75,
    "t^-2": lambda t: t**-2.0,
    "1/log t": lambda t: 1.0 / np.log(t),
    "1/log^2 t": lambda t: 1.0 / np.log(t) ** 2,
}
PANEL_HEIGHT = 1.9  # in, one row of panels
LEGEND_HEIGHT = 0.35  # in, the legend row above the panels


def _panel_data(table: pd.DataFrame, panel: Panel) -> pd.DataFrame:
    # every panel starts at t = 1: t = 0 cannot be drawn on a log axis, and a common start
    # keeps the panels aligned
    data = table[(table["metric"] == panel.metric) & (table["iteration"] > 0)]
    if panel.natural_log:  # drawn as log10 on a linear axis, ticks 10^k: a log axis
        data = data.assign(value=data["value"] / math.log(10))
    elif panel.yscale == "log":
        data = data[data["value"] > 0]
    return data


def log_axis_from_exponents(ax) -> None:
    """Label a linear axis of log10 values as the log axis it is: ticks 10^k, k whole."""
    ax.yaxis.set_major_locator(MaxNLocator(nbins=5, integer=True, min_n_ticks=2))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"$10^{{{round(y)}}}$"))


# A log10 panel whose curves end further apart than this factor (in decades, among those
# at least a decade down) spans so many decades that -2 and -8 would flatten onto one line
# next to -400: its axis stops below the other curves, and the deep one leaves it, marked.
FLOOR_SPREAD = 20.0
FLOOR_MARGIN = 0.08  # of the kept curves' range, below their lowest value


def axis_floor(data: pd.DataFrame) -> tuple[float, float] | None:
    """The limits of a log10 panel (in log10) where a curve ends FLOOR_SPREAD times more
    decades down than the shallowest curve that falls a decade or more: those of the other
    curves, with a margin. None: show all."""
    means = data.groupby(["optimizer", "iteration"])["value"].mean()
    depth = -means.groupby(level="optimizer").last()
    deep = depth[depth >= 1.0]
    if len(deep) < 2:
        return None
    kept = depth[depth <= FLOOR_SPREAD * deep.min()].index
    if len(kept) == len(depth):
        return None
    shown = data[data["optimizer"].isin(kept)]["value"]
    margin = FLOOR_MARGIN * (shown.max() - shown.min())
    return float(shown.min() - margin), float(data["value"].max() + margin)


def mark_below(ax, data: pd.DataFrame, floor: float, colours: dict, x_shift: int = 0) -> list:
    """Draw a ▼ on the axis' bottom edge where each optimizer's mean curve leaves it;
    return (optimizer, t where it leaves, its last t, its last mean value) for each."""
    means = data.groupby(["optimizer", "iteration"])["value"].mean()
    left = []
    for name, curve in means.groupby(level="optimizer"):
        curve = curve.droplevel("optimizer")
        below = curve[curve < floor]
        if below.empty:
            continue
        t = below.index[0]
        ax.plot(
            t + x_shift, floor, "v", color=colours[name], mec="black", mew=0.5, ms=6,
            clip_on=False, zorder=6,
        )  # fmt: skip
        left.append((name, int(t), int(curve.index[-1]), float(curve.iloc[-1])))
    return left


# Mean curves of two optimizers closer than this fraction of the panel's height (in the
# axis' own coordinate: log10 on a log axis) at every logged t nearly cover each other; the
# legend says so, since then mainly their markers tell them apart.
OVERLAP_HEIGHT = 0.05


def coinciding(data: pd.DataFrame, yscale: str, height: float) -> list[tuple[str, str]]:
    """Pairs of optimizers whose mean curves in `data` lie within `height` of the panel's
    height of each other wherever both are drawn, on a `yscale` axis (linthresh 1)."""
    means = data.groupby(["iteration", "optimizer"])["value"].mean().unstack("optimizer")
    if yscale == "log":
        means = np.log10(means.where(means > 0))
    elif yscale == "symlog":
        means = np.sign(means) * np.log10(1 + means.abs())
    span = np.nanmax(means.to_numpy()) - np.nanmin(means.to_numpy()) if means.size else 0.0
    if not np.isfinite(span) or span <= 0:
        return []
    names = list(means.columns)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            gap = (means[a] - means[b]).abs().dropna()
            if len(gap) and gap.max() <= height * span:
                pairs.append((a, b))
    return pairs


def coinciding_groups(pairs: list[tuple[str, str]]) -> list[tuple[str, ...]]:
    """The pairs of `coinciding` joined into groups of curves that cover each other (in
    the order their members first appear)."""
    groups: list[list[str]] = []
    for a, b in pairs:
        joined = [g for g in groups if a in g or b in g]
        merged = [n for g in joined for n in g]
        merged += [n for n in (a, b) if n not in merged]
        groups = [g for g in groups if g not in joined] + [merged]
    return [tuple(g) for g in groups]


ALMOST = " \u2248 "


def overlap_labels(overlaps: dict, labels: dict) -> list[str]:
    """Legend entries 'A ≈ B ≈ C in (a), (c)' from {(a, b, ...): [panel letters]}."""
    return [
        f"{ALMOST.join(labels.get(n, n) for n in group)} in {', '.join(where)}"
        for group, where in overlaps.items()
    ]


MARKER_SPACING = 0.09  # fraction of the axes' diagonal
REFERENCE_STYLES = ("--", ":")
REFERENCE_NAMES = {"--": "dashed", ":": "dotted"}


def optimizer_styles(
    order: list[str], column: str = "optimizer_label", focus: str | None = None
) -> dict:
    """sns.lineplot arguments that give each optimizer of `order` (labels, in legend order)
    a colour, a line style and a marker, so that curves which coincide stay apart; `focus`
    (a label) gets the first of each and a thicker line. Call `space_markers(ax, order)`
    after plotting to thin the markers."""
    ranked = emphasis_order(order, focus)
    return {
        "hue": column,
        "hue_order": order,
        "palette": dict(zip(ranked, optimizer_colours(len(order)), strict=True)),
        "style": column,
        "style_order": order,
        "dashes": dict(zip(ranked, LINE_STYLES, strict=False)),
        "markers": dict(zip(ranked, MARKERS, strict=False)),
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


def space_markers(ax, order: list[str]) -> None:
    """Thin each optimizer's markers to one per MARKER_SPACING of the axes' diagonal, the
    start offset by optimizer so that markers of coinciding curves alternate."""
    markers = list(MARKERS[: len(order)])
    for line in ax.get_lines():
        if line.get_marker() in markers:
            start = MARKER_SPACING * (markers.index(line.get_marker()) + 0.5) / len(markers)
            line.set_markevery((start, MARKER_SPACING))


def _draw_reference(
    ax, data: pd.DataFrame, ref: Reference, t_max: int, style: str, in_log10: bool
) -> bool:
    """The rate `ref` from its curve's point at anchor * t_max to where it leaves the
    panel (or t_max), labelled at that end. `in_log10`: the panel draws log10 values."""
    # the optimizer's line as seed_lines drew it (a geometric mean on a log axis)
    drawn = seed_summary(ax, data[data["optimizer"] == ref.optimizer], "optimizer")
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


def lines_text(table: pd.DataFrame) -> str:
    """How the lines and bands of a figure are drawn, for its caption."""
    seeds = sorted(set(table.groupby("optimizer")["seed"].nunique()))
    if seeds == [1]:
        return "Lines: a single run."
    counts = ", ".join(str(v) for v in seeds)
    return f"Lines: mean over {counts} seeds (geometric on log axes); bands: min to max over seeds."


def _caption(
    table: pd.DataFrame,
    legend: dict,
    note: str = "",
    references=(),
    late_starts=(),
    panel_notes=(),
) -> str:
    """The drawing's notes: what the lines are, the reference rates drawn (`references`:
    their line styles), panels whose curves begin after t = 1 (`late_starts`: (letter, t)),
    what the panels draw differently (`panel_notes`), the optimizers' settings and `note`
    (the hypotheses measured, the backend)."""
    parts = [lines_text(table)]
    if references:
        styles = " and ".join(REFERENCE_NAMES[s] for s in REFERENCE_STYLES if s in references)
        parts.append(
            f"Black {styles} lines: rates stated in the paper, starting on the curve of the "
            "optimizer they are proved for and labelled at their end (slopes, not fits)."
        )
    by_start: dict[int, list[str]] = {}
    for panel_letter, start in late_starts:
        by_start.setdefault(start, []).append(panel_letter)
    for start, letters in by_start.items():
        verb = "begins" if len(letters) == 1 else "begin"
        parts.append(
            f"{', '.join(letters)} {verb} at t = {start}: before, the value is 0, which a log "
            "axis cannot show."
        )
    parts.extend(panel_notes)
    parts.append(
        "Optimizers: " + "; ".join(f"{label}: {text}" for label, text in legend.values()) + "."
    )
    parts.append(note)
    return " ".join(p for p in parts if p).strip()


def backend_note(provenance: dict) -> str:
    """Which implementation trained the runs, from the provenance (as its files record)."""
    trained = trained_on(provenance.get("training", {}))
    return f"Trained on {trained}." if trained else ""


def _below_notes(left: list, panel_letter: str, labels: dict, x_shift: int = 0) -> list[str]:
    return [
        f"In {panel_letter}, {labels.get(name, name)} leaves the axis at "
        f"t = {t - x_shift:,} (\u25bc) and reaches 10^{end:.1f} at t = {last - x_shift:,}."
        for name, t, last, end in left
    ]


def _legend_above(fig, handles: list, texts: list, below: bool) -> None:
    """One legend row above the panels: the optimizers (`handles`, `texts`) and, if a
    curve leaves an axis (`below`), the marker drawn where it does."""
    if below:
        handles.append(plt.Line2D([], [], ls="", marker="v", color="0.4", mec="black", mew=0.5))
        texts.append("leaves the axis")
    fig.legend(
        handles, texts, loc="outside upper center", ncol=len(texts), frameon=False,
        handletextpad=0.4, columnspacing=1.2,
    )  # fmt: skip


def say_coinciding(ax, groups: list[tuple[str, ...]], labels: dict) -> None:
    """Name the curves that cover each other inside the panel ('NGD ≈ PS'), where a
    reader looks for the missing line."""
    if groups:
        texts = [ALMOST.join(labels.get(n, n) for n in group) for group in groups]
        blank = plt.Line2D([], [], ls="", marker="")
        ax.legend(
            [blank] * len(texts), texts, loc="best", handlelength=0, handletextpad=0,
            frameon=True, framealpha=0.8, borderpad=0.3,
        )  # fmt: skip


def draw(
    kind: str,
    table: pd.DataFrame,
    *,
    title: str,
    legend: dict,
    outputs,
    provenance: dict | None = None,
    note: str = "",
    geometry: dict | None = None,
    description: str = "",
) -> str:
    """Draw figure `kind` into each path of `outputs` (PDF, PNG, ...; a `.caption.md` path
    gets the caption) and return the caption.

    `provenance` (attnbias.workflow.provenance.collect) goes into each file's metadata;
    `description` (panels.describe) opens the caption and `note` (the hypotheses measured on
    the data) ends it. `geometry` (kind bad_init_2d only): seed 0's data file contents
    plus its `W_mm`, for the left panel.
    """
    if kind not in PANELS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {sorted(PANELS)}")
    note = " ".join(p for p in (note, backend_note(provenance or {})) if p)
    missing = set(legend) - set(table["optimizer"])
    if missing:
        raise ValueError(f"the metrics table has no rows for optimizer(s) {sorted(missing)}")
    apply_theme()
    labels = {name: label for name, (label, _) in legend.items()}
    order = list(labels.values())
    focus = labels.get(FOCUS.get(kind))
    styles = optimizer_styles(order, focus=focus)
    colours = {name: styles["palette"][label] for name, label in labels.items()}
    table = table.assign(optimizer_label=table["optimizer"].map(labels))
    if kind == "bad_init_2d":
        fig, axes, x_shift = _bad_init_2d_axes(geometry)
        table = table.assign(iteration=table["iteration"] + x_shift)
    else:
        rows, cols = LAYOUT[kind]
        fig, grid = plt.subplots(
            rows, cols, figsize=(FULL_WIDTH, PANEL_HEIGHT * rows + LEGEND_HEIGHT),
            squeeze=False, layout="constrained",
        )  # fmt: skip
        axes, x_shift = list(grid.flat), 0
    first = int(kind == "bad_init_2d")
    t_max = int(table["iteration"].max())
    drawn_styles, late_starts, panel_notes = set(), [], []
    overlaps: dict = {}
    for i, (ax, panel) in enumerate(zip(axes[first:], PANELS[kind], strict=True), start=first):
        data = _panel_data(table, panel)
        in_log10 = panel.natural_log
        yscale = "linear" if in_log10 else panel.yscale
        ax.set_xscale("log")
        ax.set_yscale(yscale)  # before plotting: seed_lines then averages in log space
        seed_lines(ax, data, styles, legend=i == first)
        space_markers(ax, order)
        limits = None
        if in_log10:
            log_axis_from_exponents(ax)
            limits = axis_floor(data)
            if limits is not None:
                ax.set_ylim(*limits)
                left = mark_below(ax, data, limits[0], colours)
                panel_notes += _below_notes(left, letter(i), labels, x_shift)
        # judged as drawn: a curve below the axis counts as on its edge
        shown = data.assign(value=data["value"].clip(*limits)) if limits else data
        groups = coinciding_groups(
            coinciding(shown, "linear" if in_log10 else yscale, OVERLAP_HEIGHT)
        )
        for group in groups:
            overlaps.setdefault(group, []).append(letter(i))
        for ref, style in zip(panel.references, REFERENCE_STYLES, strict=False):
            if _draw_reference(ax, data, ref, t_max, style, in_log10):
                drawn_styles.add(style)
        if not data.empty and data["iteration"].min() > 1 + x_shift:
            late_starts.append((letter(i), int(data["iteration"].min()) - x_shift))
        if kind == "bad_init_2d":
            _mark_softmax_minimum(ax, panel, data, geometry, styles["palette"])
        ax.set_xlim(1, t_max)
        ax.set_xlabel("iteration $t + 1$" if x_shift else "iteration $t$")
        ax.set_ylabel(panel.ylabel)
        ax.set_title(letter(i), loc="left", fontweight="bold")
        if i == first:  # the optimizers' legend goes above the panels
            handles, texts = ax.get_legend_handles_labels()
            ax.get_legend().remove()
        say_coinciding(ax, groups, labels)
    _legend_above(fig, handles, texts, any("leaves the axis" in n for n in panel_notes))
    if focus is not None:
        panel_notes.append(f"Thick line: {focus}, the algorithm the figure is about.")
    if overlaps:
        panel_notes.append(
            f"Curves whose means lie within {OVERLAP_HEIGHT:.0%} of a panel's height of each "
            "other at every t, named in their panels (A \u2248 B), where the markers tell "
            f"them apart: {'; '.join(overlap_labels(overlaps, labels))}."
        )
    if kind == "bad_init_2d":
        panel_notes.append(_bad_init_2d_note(geometry))
    text = captions.compose(
        title,
        description,
        _caption(table, legend, "", drawn_styles, late_starts, panel_notes),
        note,
    )
    save_figure(fig, outputs, provenance, caption=text)
    return text


def _mark_softmax_minimum(ax, panel: Panel, data: pd.DataFrame, geometry: dict, palette):
    """bad_init_2d's softmax panels: 1/T dotted, and a star at each curve's minimum where
    it comes after t = 0 (the dip the bad start causes)."""
    if not panel.metric.startswith("opt_softmax_"):
        return
    ax.axhline(1 / geometry["X"].shape[1], color="black", ls=":", lw=0.8)
    ax.set_ylim(0, 1.02)
    means = data.groupby(["optimizer_label", "iteration"])["value"].mean()
    for label, curve in means.groupby(level="optimizer_label"):
        curve = curve.droplevel("optimizer_label")
        if curve.idxmin() > curve.index.min():
            ax.plot(
                curve.idxmin(), curve.min(), "*", color=palette[label], mec="black", mew=0.5,
                ms=8, zorder=5,
            )  # fmt: skip


def _bad_init_2d_axes(geometry: dict | None):
    """App. C.1's figure: the geometry panel over the first column's two rows, the four
    metric panels beside it; t + 1 on the log axes, so that t = 0 is drawn."""
    if geometry is None:
        raise ValueError("figure kind bad_init_2d needs `geometry` (the data and W_mm of seed 0)")
    fig = plt.figure(
        figsize=(FULL_WIDTH, 2 * PANEL_HEIGHT + LEGEND_HEIGHT + 0.3), layout="constrained"
    )
    spec = fig.add_gridspec(2, 3, width_ratios=[1.2, 1, 1])
    geometry_ax = fig.add_subplot(spec[:, 0])
    _geometry_panel(geometry_ax, geometry)
    geometry_ax.set_title(letter(0), loc="left", fontweight="bold")
    metric_axes = [fig.add_subplot(spec[r, c]) for r in range(2) for c in (1, 2)]
    return fig, [geometry_ax, *metric_axes], 1


def _bad_init_2d_note(geometry: dict) -> str:
    T = geometry["X"].shape[1]
    return (
        f"Here ||W_0||_F = {np.linalg.norm(geometry['W0']):.3g} and 1/T = {1 / T:.3g}. "
        "The t axes show t + 1 on a log scale, so that t = 0 is drawn."
    )


SAMPLE_MARKERS = ("o", "s")  # sample 1, sample 2 in the geometry panel


def _geometry_panel(ax, geometry: dict) -> None:
    """App. C.1's left plot: the tokens, and the key W x_{i,1} that scores sample i's tokens
    (token t's logit is <x_{i,t}, W x_{i,1}>) under W0 (dashed) and W_mm (solid)."""
    from matplotlib.patches import FancyArrowPatch

    X, opt, W0, W_mm = geometry["X"], geometry["opt"], geometry["W0"], geometry["W_mm"]
    n, T, d = X.shape
    if d != 2:
        raise ValueError(f"the geometry panel draws 2-D tokens; this dataset has d = {d}")
    # black and purple: not the optimizers' colours, apart for colour-blind readers and in
    # grayscale (the samples also differ by marker)
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
            label=f"sample {i + 1} ($y = {int(geometry['y'][i]):+d}$)",
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


def save_figure(fig, outputs, provenance: dict | None = None, caption: str | None = None) -> None:
    """Save `fig` to every path (its format from the suffix), atomically, and close it; a
    `.caption.md` path gets `caption` instead.

    `provenance` (a record of attnbias.workflow.provenance) goes into each file's metadata.
    """
    for path in outputs:
        if captions.is_caption(path):
            if caption is None:
                raise ValueError(f"{path}: this figure has no caption to write")
            captions.write(path, caption)
            continue
        with atomic_path(path) as tmp:
            savefig(fig, tmp, str(path).rsplit(".", 1)[-1], provenance, dpi=150)
        # the layout is fixed by the first file (in inches, so the same at any dpi): the
        # other formats keep it instead of solving it again (a second of CPU per figure).
        # No engine at all, not "none": with one, savefig draws the figure twice
        fig.set_layout_engine(None)
    plt.close(fig)


STUDY_TITLE = "Global convergence over random initial directions and scales"


def _study_caption(runs: pd.DataFrame, settings: dict) -> str:
    knobs = "; ".join(
        f"{name}: " + (", ".join(f"{k} {v:g}" for k, v in knob.items()) or "plain Example 1")
        for name, knob in settings["settings"].items()
    )
    size = settings["data"]
    diverged = int(runs["diverged"].sum()) if "diverged" in runs else 0
    return (
        f"{settings['inits']} random initial W0 per setting and optimizer, ||W0|| cycling over "
        f"{settings['scales']}, {settings['iterations']} steps, n={size['n']}, T={size['T']}, "
        f"d={size['d']}. Reached: 1 - cos(W_t, W_mm) < {settings['threshold']:g} at a logged "
        f"iteration (dashed in (c)); runs whose loss diverged ({diverged} in all) count as not "
        "reached. "
        f"Effective gap: the gap of W restricted to the query tokens' span (the part of W0 "
        f"outside it never moves). Settings: {knobs}."
    )


def draw_study(
    runs: pd.DataFrame,
    summary: pd.DataFrame,
    *,
    legend,
    settings,
    outputs,
    provenance: dict | None = None,
):
    """The global-convergence study: fractions reached by setting and by scale, and gaps.

    `provenance` (attnbias.workflow.provenance.collect) goes into each file's metadata.
    """
    apply_theme()
    order = list(legend.values())
    palette = dict(zip(order, optimizer_colours(len(order)), strict=True))
    runs = runs.assign(label=runs["optimizer"].map(legend))
    summary = summary.assign(label=summary["optimizer"].map(legend))
    fig, axes = plt.subplots(1, 3, figsize=(FULL_WIDTH, 2.9), layout="constrained")
    sns.barplot(
        summary,
        x="setting",
        y="fraction_reached",
        hue="label",
        hue_order=order,
        palette=palette,
        ax=axes[0],
    )
    axes[0].set(ylim=(0, 1.05), ylabel="fraction of runs reaching W_mm", xlabel="setting")
    by_scale = runs.groupby(["scale", "label"], as_index=False)["reached"].mean()
    sns.barplot(
        by_scale,
        x="scale",
        y="reached",
        hue="label",
        hue_order=order,
        palette=palette,
        ax=axes[1],
        legend=False,
    )
    axes[1].set(
        ylim=(0, 1.05),
        ylabel="fraction reaching W_mm (all settings)",
        xlabel=r"initial scale $\|W_0\|_F$",
    )
    gaps = runs[runs["final_effective_gap"] > 0]
    sns.boxplot(
        gaps,
        x="setting",
        y="final_effective_gap",
        hue="label",
        hue_order=order,
        palette=palette,
        ax=axes[2],
        log_scale=True,
        legend=False,
        fliersize=2,
    )
    axes[2].axhline(settings["threshold"], color="black", ls="--", lw=1)
    axes[2].set(ylabel="final effective gap", xlabel="setting")
    for i, ax in enumerate(axes):
        ax.set_title(letter(i), loc="left", fontweight="bold")
        ax.tick_params(axis="x", rotation=30)
    handles, texts = axes[0].get_legend_handles_labels()
    axes[0].get_legend().remove()
    fig.legend(handles, texts, loc="outside upper center", ncol=len(texts), frameon=False)
    text = captions.compose(STUDY_TITLE, _study_caption(runs, settings))
    save_figure(fig, outputs, provenance, caption=text)
