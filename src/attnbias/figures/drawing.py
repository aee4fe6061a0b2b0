"""One seaborn figure per experiment kind, drawn from the aggregate long-format table.

Lines are the mean over seeds (on log axes seaborn averages in log space, i.e. the
geometric mean); bands span the smallest to the largest seed. Reference curves are the
rates the paper states, anchored on one optimizer's mean curve; they show a slope, not a fit.
"""

from __future__ import annotations

import math
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from attnbias.figures.panels import LAYOUT, PANELS, Panel, Reference, letter, panel_descriptions  # noqa: E402
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


def _panel_data(table: pd.DataFrame, panel: Panel) -> pd.DataFrame:
    # every panel starts at t = 1: t = 0 cannot be drawn on a log axis, and a common start
    # keeps the panels aligned
    data = table[(table["metric"] == panel.metric) & (table["iteration"] > 0)]
    if panel.transform == "log10":
        data = data.assign(value=data["value"] / math.log(10))
    if panel.yscale == "log":
        data = data[data["value"] > 0]
    return data


# A linear log10 panel whose curves end further apart than this factor (in magnitude, among
# those beyond 1) spans decades: on a linear axis -400 flattens -2 and -8 onto one line.
# Where every value is negative it is drawn negated on a log axis ("neglog": -log10 of the
# quantity, the decades below 1, which a log axis reads directly); else symlog.
SYMLOG_SPREAD = 20.0


def _y_scale(panel: Panel, data: pd.DataFrame) -> str:
    if panel.yscale != "linear" or panel.transform != "log10" or data.empty:
        return panel.yscale
    last = data[data["iteration"] == data["iteration"].max()]
    ends = last.groupby("optimizer")["value"].mean().abs()
    ends = ends[ends >= 1.0]
    if not (len(ends) > 1 and ends.max() / ends.min() > SYMLOG_SPREAD):
        return "linear"
    return "neglog" if (data["value"] < 0).all() else "symlog"


def _negated(label: str) -> str:
    """The axis label of minus the quantity: $-...$ for a math label."""
    return f"$-{label[1:]}" if label.startswith("$") else f"$-$({label})"


# Mean curves of two optimizers closer than this fraction of the panel's height (in the
# axis' own coordinate: log10 on a log axis) at every logged t nearly cover each other; the
# footnote says so, since then mainly their markers tell them apart.
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


def _overlap_notes(overlaps: dict, labels: dict) -> list[str]:
    """'A and B lie within 5% of the panel height ...' from {(a, b): [panel letters]}."""
    return [
        f"{labels.get(a, a)} and {labels.get(b, b)} lie within {OVERLAP_HEIGHT:.0%} of the "
        f"panel's height of each other at every t in {', '.join(where)}: one line nearly "
        "covers the other, and the markers tell them apart."
        for (a, b), where in overlaps.items()
    ]


def optimizer_colours(count: int) -> list:
    """Colour-blind safe colours for `count` optimizers. seaborn's colorblind palette puts
    orange and vermilion 2nd and 4th, which look alike in thin lines: vermilion comes last."""
    colours = sns.color_palette("colorblind", 10)
    order = [0, 1, 2, 4, 8, 9, 5, 7, 6, 3]
    return [colours[i] for i in order[:count]]


# solid, dashed, dash-dot, dotted (and more), as seaborn dash specs
LINE_STYLES = ("", (5, 2), (6, 2, 1, 2), (1.5, 1.5), (8, 3, 2, 3, 2, 3), (3, 3))
# and a marker each, spaced along the line with a different start per optimizer, so that
# curves which coincide exactly (NGD and joint NGD on fig3's u) still show both
MARKERS = ("o", "s", "^", "D", "v", "P")
MARKER_SPACING = 0.09  # fraction of the axes' diagonal
REFERENCE_OFFSET = 3.0
REFERENCE_STYLES = ("--", ":")
REFERENCE_NAMES = {"--": "dashed", ":": "dotted"}


def optimizer_styles(order: list[str], column: str = "optimizer_label") -> dict:
    """sns.lineplot arguments that give each optimizer of `order` (labels, in legend order)
    a colour, a line style and a marker, so that curves which coincide stay apart. Call
    `space_markers(ax, order)` after plotting to thin the markers."""
    return {
        "hue": column,
        "hue_order": order,
        "palette": dict(zip(order, optimizer_colours(len(order)), strict=True)),
        "style": column,
        "style_order": order,
        "dashes": dict(zip(order, LINE_STYLES, strict=False)),
        "markers": dict(zip(order, MARKERS, strict=False)),
        "markersize": 5,
        "markeredgewidth": 0,
    }


def seed_lines(ax, data: pd.DataFrame, styles: dict, legend: bool, **line_kwargs) -> None:
    """Each optimizer's mean over seeds against the iteration, in a band from the lowest to
    the highest seed (every figure draws its curves this way)."""
    sns.lineplot(
        data=data,
        x="iteration",
        y="value",
        **styles,
        estimator="mean",
        errorbar=("pi", 100),
        ax=ax,
        legend=legend,
        **line_kwargs,
    )


def space_markers(ax, order: list[str]) -> None:
    """Thin each optimizer's markers to one per MARKER_SPACING of the axes' diagonal, the
    start offset by optimizer so that markers of coinciding curves alternate."""
    markers = list(MARKERS[: len(order)])
    for line in ax.get_lines():
        if line.get_marker() in markers:
            start = MARKER_SPACING * (markers.index(line.get_marker()) + 0.5) / len(markers)
            line.set_markevery((start, MARKER_SPACING))


def _draw_reference(
    ax, data: pd.DataFrame, ref: Reference, t_max: int, style: str, on: str
) -> bool:
    curve = data[data["optimizer"] == ref.optimizer].groupby("iteration")["value"]
    curve = np.exp(curve.apply(lambda v: np.log(v).mean()))  # geometric mean over seeds
    curve = curve[curve.index > 1]
    if curve.empty:
        return False
    t0 = curve.index[np.argmin(np.abs(curve.index - max(ref.anchor * t_max, 2)))]
    shape = SHAPES[ref.shape]
    t = np.geomspace(t0, t_max, 50)
    # offset from the curve it is anchored on, so that both stay visible
    y = REFERENCE_OFFSET * curve[t0] * shape(t) / shape(t0)
    ax.plot(t, y, ls=style, color="black", lw=1.3, label=f"{ref.label}, on {on}")
    return True


def _scale_notes(negated: list[str], symlog: list[str]) -> list[str]:
    notes = []
    if negated:
        notes.append(
            f"{', '.join(negated)}: minus a log10 on a log axis, since the values span decades "
            "(10^2 there means the quantity is 10^-2)."
        )
    if symlog:
        notes.append(f"{', '.join(symlog)}: a log10 on a symlog axis (linear within 1 of 0).")
    return notes


def _caption(
    table: pd.DataFrame,
    legend: dict,
    note: str = "",
    references=(),
    late_starts=(),
    panel_notes=(),
) -> str:
    """The footnote: what the lines are, the reference rates drawn (`references`: their
    line styles), panels whose curves begin after t = 1 (`late_starts`: (letter, t)), what
    the panels draw differently (`panel_notes`), the optimizers' settings and the
    hypotheses `note`."""
    seeds = sorted(set(table.groupby("optimizer")["seed"].nunique()))
    if seeds == [1]:
        lines = "Lines: a single run."
    else:
        counts = ", ".join(str(v) for v in seeds)
        lines = (
            f"Lines: mean over {counts} seeds (geometric on log axes); "
            "bands: min to max over seeds."
        )
    parts = [lines]
    if references:
        styles = " and ".join(REFERENCE_NAMES[s] for s in REFERENCE_STYLES if s in references)
        parts.append(
            f"Black {styles} lines: rates stated in the paper, anchored on the curve of the "
            f"optimizer their legend names and drawn {REFERENCE_OFFSET:g}x above it (slopes, "
            "not fits)."
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
    parts.append("; ".join(f"{label}: {caption}" for label, caption in legend.values()) + ".")
    parts.append(note)
    return " ".join(p for p in parts if p).strip()


def backend_note(provenance: dict) -> str:
    """Which implementation trained the runs, from the provenance (as its files record)."""
    trained = trained_on(provenance.get("training", {}))
    return f"Trained on {trained}." if trained else ""


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
) -> None:
    """Draw figure `kind` and save it to each path in `outputs` (PDF, PNG, ...).

    `provenance` (attnbias.workflow.provenance.collect) goes into each file's metadata; `note` (the
    hypotheses measured on the data) ends the caption. `geometry` (kind bad_init_2d only):
    seed 0's data file contents plus its `W_mm`, for the left panel.
    """
    if kind not in PANELS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {sorted(PANELS)}")
    note = " ".join(p for p in (backend_note(provenance or {}), note) if p)
    missing = set(legend) - set(table["optimizer"])
    if missing:
        raise ValueError(f"the metrics table has no rows for optimizer(s) {sorted(missing)}")
    if kind == "bad_init_2d":
        draw_bad_init_2d(
            table,
            geometry,
            title=title,
            legend=legend,
            outputs=outputs,
            provenance=provenance,
            note=note,
        )
        return
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    labels = {name: label for name, (label, _) in legend.items()}
    order = list(labels.values())
    styles = optimizer_styles(order)
    table = table.assign(optimizer_label=table["optimizer"].map(labels))
    rows, cols = LAYOUT[kind]
    fig, axes = plt.subplots(rows, cols, figsize=(4.3 * cols, 3.5 * rows + 0.9), squeeze=False)
    t_max = int(table["iteration"].max())
    drawn_styles, late_starts, negated, symlog = set(), [], [], []
    overlaps: dict = {}
    for i, (ax, panel) in enumerate(zip(axes.flat, PANELS[kind], strict=True)):
        data = _panel_data(table, panel)
        yscale = _y_scale(panel, data)
        ylabel = panel.ylabel
        if yscale == "neglog":
            data, yscale, ylabel = data.assign(value=-data["value"]), "log", _negated(ylabel)
            negated.append(letter(i))
        elif yscale == "symlog":
            symlog.append(letter(i))
        for pair in coinciding(data, yscale, OVERLAP_HEIGHT):
            overlaps.setdefault(pair, []).append(letter(i))
        ax.set_xscale(panel.xscale)
        # before plotting: seaborn then averages in log space; symlog: linear near 0
        ax.set_yscale(yscale, **({"linthresh": 1.0} if yscale == "symlog" else {}))
        seed_lines(ax, data, styles, legend=i == 0)
        space_markers(ax, order)
        for ref, style in zip(panel.references, REFERENCE_STYLES, strict=False):
            if _draw_reference(
                ax, data, ref, t_max, style, labels.get(ref.optimizer, ref.optimizer)
            ):
                drawn_styles.add(style)
        if not data.empty and data["iteration"].min() > 1:
            late_starts.append((letter(i), int(data["iteration"].min())))
        ax.set_xlim(1, t_max)
        ax.set_xlabel("iteration $t$")
        ax.set_ylabel(ylabel)
        ax.set_title(letter(i), loc="left", fontsize="medium")
        handles, texts = ax.get_legend_handles_labels()
        if i == 0:
            ax.legend(handles, texts, title=None, fontsize="small")
        elif panel.references:
            refs = [(h, t) for h, t in zip(handles, texts, strict=True) if t not in labels.values()]
            if refs:
                ax.legend(*zip(*refs, strict=True), fontsize="small", loc="best")
    fig.suptitle(title, fontsize="large")
    notes = [*_scale_notes(negated, symlog), *_overlap_notes(overlaps, labels)]
    caption = _caption(table, legend, note, drawn_styles, late_starts, notes)
    lines = textwrap.wrap(caption, 60 * cols)
    # the footnote's height grows with its lines (about 0.14 in each), the panels keep theirs
    foot = 0.12 + 0.14 * len(lines)
    fig.set_size_inches(4.3 * cols, 3.5 * rows + 0.35 + foot)
    fig.text(0.01, 0.005, "\n".join(lines), fontsize="small", va="bottom", ha="left")
    fig.tight_layout(rect=(0, foot / (3.5 * rows + 0.35 + foot), 1, 1))
    save_figure(fig, outputs, provenance)


SAMPLE_MARKERS = ("o", "s")  # sample 1, sample 2 in the geometry panel
EXCESS_FLOOR = 1e-9  # bottom of the excess-loss axis; a curve below it is named in the panel


def _geometry_panel(ax, geometry: dict) -> None:
    """App. C.1's left plot: the tokens, and the key W x_{i,1} that scores sample i's tokens
    (token t's logit is <x_{i,t}, W x_{i,1}>) under W0 (dashed) and W_mm (solid)."""
    from matplotlib.patches import FancyArrowPatch

    X, opt, W0, W_mm = geometry["X"], geometry["opt"], geometry["W0"], geometry["W_mm"]
    n, T, d = X.shape
    if d != 2:
        raise ValueError(f"the geometry panel draws 2-D tokens; this dataset has d = {d}")
    colors = sns.color_palette("dark", 8)[2:4]  # not the optimizers' colours
    points = [np.zeros(2)]
    for i in range(n):
        marker, color = SAMPLE_MARKERS[i % len(SAMPLE_MARKERS)], colors[i % len(colors)]
        for t in range(T):
            x = X[i, t]
            points.append(x)
            face = color if t == opt[i] else "white"
            ax.scatter(
                *x, s=110, marker=marker, facecolors=[face], edgecolors=[color], lw=2, zorder=4
            )
            ax.annotate(
                f"$x_{{{i + 1},{t + 1}}}$",
                x,
                xytext=(8, 4),
                textcoords="offset points",
                color=color,
                fontsize="large",
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
                    mutation_scale=14,
                    color=color,
                    lw=1.8,
                    ls=style,
                    zorder=3,
                )
            )
    points = np.array(points)
    lo, hi = points.min(axis=0) - 0.25, points.max(axis=0) + 0.25
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.scatter([0], [0], marker="+", color="black", s=60, zorder=5)
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
        fontsize="small",
        loc="upper center",
        bbox_to_anchor=(0.5, -0.1),
        ncol=3,
        columnspacing=0.8,
        handletextpad=0.3,
        frameon=False,
    )
    ax.tick_params(labelsize="small")


def _bad_init_2d_caption(table: pd.DataFrame, legend: dict, geometry: dict) -> str:
    seeds = table["seed"].nunique()
    lines = "Lines: a single run." if seeds == 1 else f"Lines: mean over {seeds} seeds."
    settings = "; ".join(f"{label}: {caption}" for label, caption in legend.values())
    panels = " ".join(
        f"{letter(i)} {text[0].upper()}{text[1:]}."
        for i, text in enumerate(panel_descriptions("bad_init_2d"))
    )
    T = geometry["X"].shape[1]
    return (
        f"{panels} Here ||W_0||_F = {np.linalg.norm(geometry['W0']):.3g} and 1/T = {1 / T:.3g}. "
        f"Every t axis is linear on [0, 1] and logarithmic above, from t = 0. {lines} {settings}."
    )


def draw_bad_init_2d(
    table: pd.DataFrame,
    geometry: dict | None,
    *,
    title: str,
    legend: dict,
    outputs,
    provenance: dict | None = None,
    note: str = "",
) -> None:
    """App. C.1's figure (fig8): the 2-D geometry, then the two samples' optimal-token
    softmax, 1 - cos(W_t, W_mm) and the excess train loss, every t axis from t = 0."""
    if geometry is None:
        raise ValueError("figure kind bad_init_2d needs `geometry` (the data and W_mm of seed 0)")
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    labels = {name: label for name, (label, _) in legend.items()}
    order = list(labels.values())
    styles = optimizer_styles(order)
    palette = styles["palette"]
    excess = table[table["metric"] == "log_excess_loss"]
    excess = excess.assign(metric="excess_loss", value=np.exp(excess["value"]))
    table = pd.concat([table, excess], ignore_index=True)
    table["optimizer_label"] = table["optimizer"].map(labels)
    rows, cols = LAYOUT["bad_init_2d"]
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.9 * cols, 5.6), squeeze=False, width_ratios=[1.15, 1, 1, 1, 1]
    )
    axes = axes.flat
    _geometry_panel(axes[0], geometry)
    axes[0].set_title("(a) tokens and key directions", loc="left", fontsize="medium")
    t_max = int(table["iteration"].max())
    T = geometry["X"].shape[1]
    for i, (ax, panel) in enumerate(zip(axes[1:], PANELS["bad_init_2d"], strict=True), start=1):
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_yscale(panel.yscale)
        data = table[table["metric"] == panel.metric]
        if panel.yscale == "log":
            data = data[data["value"] > 0]
        seed_lines(ax, data, styles, legend=i == 1, lw=1.8)
        space_markers(ax, order)
        means = data.groupby(["optimizer_label", "iteration"])["value"].mean()
        if panel.metric.startswith("opt_softmax_"):
            ax.axhline(1 / T, color="black", ls=":", lw=1.0)
            ax.set_ylim(0, 1.02)
            for label in order:
                curve = means[label]
                if curve.idxmin() > curve.index.min():
                    ax.plot(
                        curve.idxmin(),
                        curve.min(),
                        "*",
                        color=palette[label],
                        mec="black",
                        ms=12,
                        zorder=5,
                    )
        if panel.metric == "excess_loss":
            ax.set_ylim(EXCESS_FLOOR, 2 * data["value"].max())
            below = [
                f"{label}: {means[label].iloc[-1]:.1e} at t = {t_max:,}"
                for label in order
                if means[label].iloc[-1] < EXCESS_FLOOR
            ]
            if below:
                ax.text(
                    0.04,
                    0.03,
                    "below the axis:\n" + "\n".join(below),
                    transform=ax.transAxes,
                    ha="left",
                    va="bottom",
                    fontsize="small",
                )
        ax.set_xlim(0, t_max)
        ax.set_xlabel("iteration $t$")
        ax.set_ylabel(panel.ylabel)
        ax.set_title(f"({chr(97 + i)})", loc="left", fontsize="medium")
        if i == 1:
            ax.legend(title=None, fontsize="small", loc="lower right")
    fig.suptitle(title, fontsize="large")
    caption = f"{_bad_init_2d_caption(table, legend, geometry)} {note}".strip()
    fig.text(
        0.01,
        0.005,
        "\n".join(textwrap.wrap(caption, 48 * cols)),
        fontsize="small",
        va="bottom",
        ha="left",
    )
    fig.tight_layout(rect=(0, 0.17, 1, 1))
    save_figure(fig, outputs, provenance)


def save_figure(fig, outputs, provenance: dict | None = None) -> None:
    """Save `fig` to every path (its format from the suffix), atomically, and close it.

    `provenance` (a record of attnbias.workflow.provenance) goes into each file's metadata.
    """
    for path in outputs:
        with atomic_path(path) as tmp:
            savefig(fig, tmp, str(path).rsplit(".", 1)[-1], provenance, dpi=150)
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
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    order = list(legend.values())
    palette = dict(zip(order, optimizer_colours(len(order)), strict=True))
    runs = runs.assign(label=runs["optimizer"].map(legend))
    summary = summary.assign(label=summary["optimizer"].map(legend))
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))
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
        ax.set_title(f"({chr(97 + i)})", loc="left", fontsize="medium")
        ax.tick_params(axis="x", rotation=30)
    axes[0].legend(title=None, fontsize="small")
    fig.suptitle(STUDY_TITLE, fontsize="large")
    fig.text(
        0.01,
        0.005,
        "\n".join(textwrap.wrap(_study_caption(runs, settings), 190)),
        fontsize="small",
        va="bottom",
        ha="left",
    )
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    save_figure(fig, outputs, provenance)
