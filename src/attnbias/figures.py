"""One seaborn figure per experiment kind, drawn from the aggregate long-format table.

Lines are the mean over seeds (on log axes seaborn averages in log space, i.e. the
geometric mean); bands span the smallest to the largest seed. Reference curves are the
rates the paper states, anchored on one optimizer's mean curve; they show a slope, not a fit.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from attnbias.io import atomic_path  # noqa: E402
from attnbias.provenance import savefig  # noqa: E402


@dataclass(frozen=True)
class Reference:
    """A rate the paper states: C * shape(t), anchored on `optimizer`'s curve at anchor * t_max."""

    optimizer: str
    shape: str  # key of SHAPES
    label: str
    anchor: float = 0.003


SHAPES = {
    "t": lambda t: t,
    "log t": np.log,
    "t^-3/4": lambda t: t**-0.75,
    "t^-2": lambda t: t**-2.0,
    "1/log t": lambda t: 1.0 / np.log(t),
    "1/log^2 t": lambda t: 1.0 / np.log(t) ** 2,
}


@dataclass(frozen=True)
class Panel:
    metric: str
    ylabel: str
    xscale: str = "log"
    yscale: str = "log"
    transform: str | None = None  # "log10" turns a natural-log metric into log10
    references: tuple[Reference, ...] = field(default_factory=tuple)


LOG10_1M_SOFTMAX = Panel(
    "log1m_opt_softmax", r"$\log_{10}(1 - \bar s_{\mathrm{opt}})$", "linear", "linear", "log10"
)
W_NORM = Panel("W_norm", r"$\|W_t\|_F$", references=(Reference("ngd", "t", r"$\propto t$"),))

PANELS = {
    "fixed_decoder": [
        Panel("loss", r"train loss $L(W_t)$", "log", "linear"),
        Panel("log_excess_loss", r"$\log_{10}(L(W_t) - L_\star)$", "log", "linear", "log10"),
        W_NORM,
        LOG10_1M_SOFTMAX,
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            references=(Reference("ngd", "t^-3/4", r"$t^{-3/4}$ (Thm. 1 rate)"),),
        ),
        Panel("log_step_W", r"step size $\log_{10}\eta_t$", "log", "linear", "log10"),
    ],
    "joint": [
        # symlog: the curves end between -2 (GD) and -10^3 (PS); a linear axis flattens GD
        Panel("log_loss", r"$\log_{10} L(W_t, u_t)$", "log", "symlog", "log10"),
        Panel("W_norm", r"$\|W_t\|_F$"),
        Panel("u_norm", r"$\|u_t\|$"),
        LOG10_1M_SOFTMAX,
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            references=(Reference("ngd", "1/log t", r"$1/\log t$ (Thm. 3 rate)"),),
        ),
        Panel("gap_u", r"$1 - \cos(u_t, u_{mm})$"),
    ],
    "bad_init": [
        Panel("opt_softmax", r"mean opt-token softmax $\bar s_{\mathrm{opt}}$", "log", "linear"),
        Panel("loss", r"train loss $L(W_t)$", "log", "linear"),
        Panel("gap_W", r"$1 - \cos(W_t, W_{mm})$"),
        Panel("W_norm", r"$\|W_t\|_F$"),
    ],
    "two_token": [
        Panel(
            "gap_W",
            r"$1 - \cos(W_t, W_{mm})$",
            references=(
                Reference("gd", "1/log^2 t", r"$1/\log^2 t$"),
                Reference("ngd", "t^-2", r"$t^{-2}$"),
            ),
        ),
        Panel(
            "W_norm",
            r"$\|W_t\|_F$",
            references=(
                Reference("gd", "log t", r"$\propto \log t$"),
                Reference("ngd", "t", r"$\propto t$"),
            ),
        ),
    ],
}

LAYOUT = {"fixed_decoder": (2, 3), "joint": (2, 3), "bad_init": (1, 4), "two_token": (1, 2)}


def _panel_data(table: pd.DataFrame, panel: Panel) -> pd.DataFrame:
    data = table[table["metric"] == panel.metric]
    if panel.xscale == "log":
        data = data[data["iteration"] > 0]
    if panel.transform == "log10":
        data = data.assign(value=data["value"] / math.log(10))
    if panel.yscale == "log":
        data = data[data["value"] > 0]
    return data


# solid, dashed, dash-dot, dotted (and more), as seaborn dash specs
LINE_STYLES = ("", (5, 2), (6, 2, 1, 2), (1.5, 1.5), (8, 3, 2, 3, 2, 3), (3, 3))
REFERENCE_OFFSET = 3.0
REFERENCE_STYLES = ("--", ":")


def _draw_reference(
    ax, data: pd.DataFrame, ref: Reference, t_max: int, style: str, on: str
) -> None:
    curve = data[data["optimizer"] == ref.optimizer].groupby("iteration")["value"]
    curve = np.exp(curve.apply(lambda v: np.log(v).mean()))  # geometric mean over seeds
    curve = curve[curve.index > 1]
    if curve.empty:
        return
    t0 = curve.index[np.argmin(np.abs(curve.index - max(ref.anchor * t_max, 2)))]
    shape = SHAPES[ref.shape]
    t = np.geomspace(t0, t_max, 50)
    # offset from the curve it is anchored on, so that both stay visible
    y = REFERENCE_OFFSET * curve[t0] * shape(t) / shape(t0)
    ax.plot(t, y, ls=style, color="black", lw=1.3, label=f"{ref.label}, on {on}")


def _caption(table: pd.DataFrame, legend: dict, note: str = "") -> str:
    seeds = sorted(set(table.groupby("optimizer")["seed"].nunique()))
    if seeds == [1]:
        lines = "Lines: a single run."
    else:
        counts = ", ".join(str(v) for v in seeds)
        lines = (
            f"Lines: mean over {counts} seeds (geometric on log axes); "
            "bands: min to max over seeds."
        )
    settings = "; ".join(f"{label}: {caption}" for label, caption in legend.values())
    return (
        f"{lines} Black dashed/dotted lines, where drawn: rates stated in the paper, anchored "
        f"on the curve of the optimizer their legend names and drawn {REFERENCE_OFFSET:g}x "
        "above it (slopes, not fits). "
        f"{settings}. {note}"
    ).strip()


def draw(
    kind: str,
    table: pd.DataFrame,
    *,
    title: str,
    legend: dict,
    outputs,
    provenance: dict | None = None,
    note: str = "",
) -> None:
    """Draw figure `kind` and save it to each path in `outputs` (PDF, PNG, ...).

    `provenance` (attnbias.provenance.collect) goes into each file's metadata; `note` (the
    hypotheses measured on the data) ends the caption.
    """
    if kind not in PANELS:
        raise ValueError(f"unknown figure kind {kind!r}; choose one of {sorted(PANELS)}")
    missing = set(legend) - set(table["optimizer"])
    if missing:
        raise ValueError(f"the metrics table has no rows for optimizer(s) {sorted(missing)}")
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    labels = {name: label for name, (label, _) in legend.items()}
    palette = dict(zip(labels.values(), sns.color_palette("colorblind", len(labels)), strict=True))
    table = table.assign(optimizer_label=table["optimizer"].map(labels))
    rows, cols = LAYOUT[kind]
    fig, axes = plt.subplots(rows, cols, figsize=(4.3 * cols, 3.5 * rows + 0.9), squeeze=False)
    t_max = int(table["iteration"].max())
    for i, (ax, panel) in enumerate(zip(axes.flat, PANELS[kind], strict=True)):
        ax.set_xscale(panel.xscale)
        ax.set_yscale(panel.yscale)  # before plotting: seaborn then averages in log space
        data = _panel_data(table, panel)
        sns.lineplot(
            data=data,
            x="iteration",
            y="value",
            hue="optimizer_label",
            hue_order=list(labels.values()),
            palette=palette,
            # a line style per optimizer too: curves that coincide stay distinguishable
            style="optimizer_label",
            style_order=list(labels.values()),
            dashes=dict(zip(labels.values(), LINE_STYLES, strict=False)),
            estimator="mean",
            errorbar=("pi", 100),
            ax=ax,
            legend=i == 0,
        )
        for ref, style in zip(panel.references, REFERENCE_STYLES, strict=False):
            _draw_reference(ax, data, ref, t_max, style, labels.get(ref.optimizer, ref.optimizer))
        # every panel on a log axis starts at t = 1 (t = 0 cannot be drawn there)
        ax.set_xlim((1, t_max) if panel.xscale == "log" else (0, t_max))
        ax.set_xlabel("iteration $t$")
        ax.set_ylabel(panel.ylabel)
        ax.set_title(f"({chr(97 + i)})", loc="left", fontsize="medium")
        handles, texts = ax.get_legend_handles_labels()
        if i == 0:
            ax.legend(handles, texts, title=None, fontsize="small")
        elif panel.references:
            refs = [(h, t) for h, t in zip(handles, texts, strict=True) if t not in labels.values()]
            ax.legend(*zip(*refs, strict=True), fontsize="small", loc="best")
    fig.suptitle(title, fontsize="large")
    fig.text(
        0.01,
        0.005,
        "\n".join(textwrap.wrap(_caption(table, legend, note), 60 * cols)),
        fontsize="small",
        va="bottom",
        ha="left",
    )
    fig.tight_layout(rect=(0, 0.55 / (3.5 * rows + 0.9), 1, 1))
    _save(fig, outputs, provenance)


def _save(fig, outputs, provenance: dict | None = None) -> None:
    """Save `fig` to every path (its format from the suffix), atomically, and close it.

    `provenance` (a record of attnbias.provenance) goes into each file's metadata.
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
        f"iteration; runs whose loss diverged ({diverged} in all) count as not reached. "
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

    `provenance` (attnbias.provenance.collect) goes into each file's metadata.
    """
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    order = list(legend.values())
    palette = dict(zip(order, sns.color_palette("colorblind", len(order)), strict=True))
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
    _save(fig, outputs, provenance)
