"""One seaborn figure per experiment kind, drawn from the aggregate long-format table, at
print size (attnbias.figures.style), with its caption written beside it (caption.py).

Lines are the mean over seeds (on log axes taken in log space, i.e. the geometric mean, as
seaborn's lineplot takes it); bands span the smallest to the largest seed (lines.py). Every
panel has the iteration on a log axis. Reference curves are the rates the paper states,
starting on the curve of the optimizer they are proved for; they show a slope, not a fit
(references.py). Where the panels go is the kind's layout (layout.py; LAYOUTS names the
kinds with one of their own), so the drawing itself is the same for every kind.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from attnbias.figures import caption as captions  # noqa: E402
from attnbias.figures.algorithm_style import figure_looks, variants_note  # noqa: E402
from attnbias.figures.layout import Grid  # noqa: E402
from attnbias.figures.lines import optimizer_styles, seed_lines, space_markers  # noqa: E402
from attnbias.figures.log_axes import (  # noqa: E402
    axis_floor,
    below_notes,
    log_axis_from_exponents,
    mark_below,
)
from attnbias.figures.notes import backend_note, notes  # noqa: E402
from attnbias.figures.overlap import (  # noqa: E402
    OVERLAP_HEIGHT,
    coinciding,
    coinciding_groups,
    overlap_note,
    say_coinciding,
)
from attnbias.figures.panels import FOCUS, PANELS, Panel, curve_of, letter  # noqa: E402
from attnbias.figures.references import REFERENCE_STYLES, draw_reference  # noqa: E402
from attnbias.figures.save import save_figure  # noqa: E402
from attnbias.figures.style import apply_theme  # noqa: E402
from attnbias.figures.tokens_2d import Tokens2D  # noqa: E402

# The figure kinds drawn in a layout of their own (what each adds: its class); every other
# kind is a Grid of its metric panels
LAYOUTS: dict[str, type[Grid]] = {"bad_init_2d": Tokens2D}


def layout_of(kind: str) -> type[Grid]:
    """The layout that draws figure `kind` (its `needs_tokens` says what it reads)."""
    return LAYOUTS.get(kind, Grid)


def panel_data(table: pd.DataFrame, panel: Panel) -> pd.DataFrame:
    """The rows of `table` that `panel` draws, in the unit it draws them."""
    # every panel starts at t = 1: t = 0 cannot be drawn on a log axis, and a common start
    # keeps the panels aligned
    data = table[(table["metric"] == panel.metric) & (table["iteration"] > 0)]
    if panel.natural_log:  # drawn as log10 on a linear axis, ticks 10^k: a log axis
        data = data.assign(value=data["value"] / math.log(10))
    elif panel.yscale == "log":
        data = data[data["value"] > 0]
    return data


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


def draw(
    kind: str,
    table: pd.DataFrame,
    *,
    title: str,
    legend: dict,
    algorithms: dict,
    outputs,
    provenance: dict | None = None,
    note: str = "",
    tokens: dict | None = None,
    description: str = "",
) -> str:
    """Draw figure `kind` into each path of `outputs` (PDF, PNG, ...; a `.caption.md` path
    gets the caption) and return the caption.

    `algorithms`: optimizer -> its algorithm_style key (algorithm_style.algorithms_of),
    which decides its colour, marker and line style. `provenance`
    (attnbias.workflow.provenance.collect) goes into each file's metadata;
    `description` (panels.describe) opens the caption and `note` (the hypotheses measured on
    the data) ends it. `tokens`: what the kind's layout draws beyond the table (LAYOUTS;
    bad_init_2d: seed 0's data file contents plus its `W_mm`, for the left panel).
    """
    if kind not in PANELS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {sorted(PANELS)}")
    note = " ".join(p for p in (note, backend_note(provenance or {})) if p)
    missing = set(legend) - set(table["optimizer"])
    if missing:
        raise ValueError(f"the metrics table has no rows for optimizer(s) {sorted(missing)}")
    apply_theme()
    labels = {name: label for name, (label, _) in legend.items()}
    focus = labels.get(curve_of(FOCUS.get(kind, ()), algorithms))
    looks = figure_looks({name: algorithms[name] for name in labels})
    styles = optimizer_styles({labels[n]: lk for n, lk in looks.items()}, focus=focus)
    colours = {name: styles["palette"][label] for name, label in labels.items()}
    table = table.assign(optimizer_label=table["optimizer"].map(labels))
    layout = layout_of(kind)(kind, tokens)
    fig, axes = layout.figure()
    x_shift, first = layout.x_shift, layout.first
    table = table.assign(iteration=table["iteration"] + x_shift)
    t_max = int(table["iteration"].max())
    drawn_styles, late_starts, panel_notes = set(), [], []
    overlaps: dict = {}
    for i, (ax, panel) in enumerate(zip(axes, PANELS[kind], strict=True), start=first):
        data = panel_data(table, panel)
        in_log10 = panel.natural_log
        yscale = "linear" if in_log10 else panel.yscale
        ax.set_xscale("log")
        ax.set_yscale(yscale)  # before plotting: seed_lines then averages in log space
        seed_lines(ax, data, styles, legend=i == first)
        space_markers(ax, styles)
        limits = None
        if in_log10:
            log_axis_from_exponents(ax)
            limits = axis_floor(data)
            if limits is not None:
                ax.set_ylim(*limits)
                left = mark_below(ax, data, limits[0], colours)
                panel_notes += below_notes(left, letter(i), labels, x_shift)
        # judged as drawn (a curve below the axis on its edge), and on a log panel
        # never across orders of magnitude
        groups = coinciding_groups(
            coinciding(data, "decades" if in_log10 else yscale, OVERLAP_HEIGHT, limits)
        )
        for group in groups:
            overlaps.setdefault(group, []).append(letter(i))
        for ref, style in zip(panel.references, REFERENCE_STYLES, strict=False):
            curve = data[data["optimizer"] == curve_of(ref.algorithms, algorithms)]
            if draw_reference(ax, curve, ref, t_max, style, in_log10):
                drawn_styles.add(style)
        if not data.empty and data["iteration"].min() > 1 + x_shift:
            late_starts.append((letter(i), int(data["iteration"].min()) - x_shift))
        layout.decorate(ax, panel, data, styles["palette"])
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
    if variants_note(looks.values()):
        panel_notes.append(variants_note(looks.values()))
    if overlaps:
        panel_notes.append(overlap_note(overlaps, labels))
    panel_notes += layout.notes()
    text = captions.compose(
        title,
        description,
        notes(table, legend, "", drawn_styles, late_starts, panel_notes),
        note,
    )
    save_figure(fig, outputs, provenance, caption=text)
    return text
