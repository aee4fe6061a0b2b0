"""Figures of the real-data experiments, drawn from their long-format tables."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from attnbias.figures.drawing import (
    LINE_STYLES,
    optimizer_styles,
    save_figure,
    seed_lines,
    space_markers,
)

NORM_PREFIX = "norm/"
MAX_STYLED = 10  # optimizers that optimizer_styles has distinct colours for
FIXTURE_STAMP = "FIXTURE RUN (tiny test data and model, not the paper's experiment)"


def stamped(title: str, fixture: bool) -> str:
    return f"{FIXTURE_STAMP}\n{title}" if fixture else title


def _metric_panels(table: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(metric, y label, y scale) for each metric the table holds, in reading order."""
    panels = [("train_loss", "train loss (mean over the logging window)", "linear")]
    panels.append(("test_accuracy", "test accuracy", "linear"))
    if "worst_group_accuracy" in set(table["metric"]):
        panels.append(("worst_group_accuracy", "worst-group test accuracy (WILDS)", "linear"))
    return panels


def _layer_order(names) -> list[str]:
    """Layer-norm metrics in model order (the metric names carry a zero-padded index)."""
    return sorted(names)


TEST_SPLITS = {
    "mnli": "MNLI matched validation",
    "civilcomments": "the WILDS test split",
    "mnist": "the MNIST test set",
    "cifar10": "the CIFAR-10 test set",
    "mnist5k": "the subset's 1,000 held-out images (100 per digit; 4,000 train)",
}


def training_caption(settings: dict, legend: dict, source: dict) -> str:
    """What a real-data figure shows and with which settings, for the figure's foot."""
    train = settings["train"]
    model = settings.get("model_path") or f"ViT {settings.get('vit', {})}"
    subset = ""
    if train.get("train_samples") or train.get("test_samples"):
        subset = (
            f" Subsets: {train.get('train_samples') or 'all'} training and "
            f"{train.get('test_samples') or 'all'} test samples."
        )
    optimizers = "; ".join(f"{label}: {text}" for label, text in legend.values())
    seeds = settings["seeds"]
    lines = "a single run" if seeds == 1 else f"mean over {seeds} seeds, band min to max"
    return (
        f"Data: {source['datasets'][0].get('name', settings['dataset'])} from "
        f"{source['datasets'][0]['path']}; model: {model}. "
        f"{train['epochs']} epochs, batch size {train['batch_size']}, logged every "
        f"{train['log_every']} steps; lines: {lines}. Train loss: mean mini-batch "
        f"cross-entropy since the previous log point; test accuracy on "
        f"{TEST_SPLITS[settings['dataset']]}.{subset} Optimizers: {optimizers}."
    )


def draw_training(
    table: pd.DataFrame,
    *,
    title: str,
    legend: dict,
    caption: str,
    fixture: bool,
    outputs,
    provenance: dict | None = None,
) -> None:
    """Train loss, test accuracy (worst-group accuracy where logged) against iterations,
    one line per optimizer; with per-layer norms logged, one extra panel per optimizer."""
    missing = set(legend) - set(table["optimizer"])
    if missing:
        raise ValueError(f"the metrics table has no rows for optimizer(s) {sorted(missing)}")
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    labels = {name: label for name, (label, _) in legend.items()}
    order = list(labels.values())
    if len(order) <= MAX_STYLED:
        styles = optimizer_styles(order)  # the synthetic figures' colours, line styles, markers
    else:  # a learning-rate sweep: more lines than those styles, so a colour each
        styles = {"hue": "optimizer_label", "hue_order": order, "palette": "husl"}
    table = table.assign(optimizer_label=table["optimizer"].map(labels))
    panels = _metric_panels(table)
    norms = _layer_order(m for m in set(table["metric"]) if m.startswith(NORM_PREFIX))
    cols = len(panels)
    rows = 1 + (int(np.ceil(len(labels) / cols)) if norms else 0)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows + 1.0), squeeze=False)
    for i, (ax, (metric, ylabel, yscale)) in enumerate(zip(axes[0], panels, strict=True)):
        ax.set_yscale(yscale)
        seed_lines(ax, table[table["metric"] == metric], styles, legend=i == 0)
        space_markers(ax, order)
        ax.set_xlabel("iteration")
        ax.set_ylabel(ylabel)
        ax.set_title(f"({chr(97 + i)})", loc="left", fontsize="medium")
        if metric.endswith("accuracy"):
            ax.set_ylim(0, 1)
        if i == 0:
            many = len(order) > MAX_STYLED  # a sweep's legend: two columns, smaller
            ax.legend(title=None, fontsize="x-small" if many else "small", ncol=2 if many else 1)
    if norms:
        layer_palette = dict(zip(norms, sns.color_palette("viridis", len(norms)), strict=True))
        layer_dashes = {n: LINE_STYLES[i % len(LINE_STYLES)] for i, n in enumerate(norms)}
        for k, ax in enumerate(axes[1:].flat):
            if k >= len(labels):
                ax.set_visible(False)
                continue
            name, label = list(labels.items())[k]
            data = table[(table["optimizer"] == name) & table["metric"].isin(norms)]
            ax.set_yscale("log")  # layers differ by orders of magnitude; growth reads as slope
            sns.lineplot(
                data=data, x="iteration", y="value", hue="metric", hue_order=norms,
                palette=layer_palette, errorbar=None, ax=ax, legend=k == 0,
                # layers of equal norm coincide: a line style each as well
                style="metric", style_order=norms, dashes=layer_dashes,
            )  # fmt: skip
            ax.set_xlabel("iteration")
            ax.set_ylabel("parameter norm of the layer")
            ax.set_title(f"({chr(97 + cols + k)}) {label}: norm of each layer", loc="left")
            if k == 0:
                ax.legend(
                    [h for h in ax.get_legend_handles_labels()[0]],
                    [n.removeprefix(NORM_PREFIX) for n in ax.get_legend_handles_labels()[1]],
                    fontsize="x-small", ncol=2, title=None, loc="best", framealpha=0.6,
                )  # fmt: skip
    fig.suptitle(stamped(title, fixture), fontsize="large", color="firebrick" if fixture else None)
    text = "\n".join(textwrap.wrap(caption, 62 * cols))
    fig.text(0.01, 0.005, text, fontsize="small", va="bottom", ha="left")
    fig.tight_layout(rect=(0, (0.25 + 0.14 * text.count("\n")) / (3.6 * rows + 1.0), 1, 1))
    save_figure(fig, outputs, provenance)


DISPLAY_BINS = 100


def _coarsen(h: pd.DataFrame, bins: int) -> pd.DataFrame:
    """Merge neighbouring bins down to at most `bins` for display (the band's fraction is
    computed from the fine bins, in the similarity job)."""
    factor = max(1, len(h) // bins)
    group = np.arange(len(h)) // factor
    merged = h.groupby(group).agg({"lo": "first", "hi": "last", "count": "sum"})
    return merged.assign(**{c: h[c].iloc[0] for c in ("texts", "pairs", "band", "within_band")})


def draw_similarity(
    histograms: dict[str, pd.DataFrame],
    *,
    title: str,
    fixture: bool,
    outputs,
    provenance: dict | None = None,
) -> None:
    """One density of within-text cosine similarities per dataset, with the fraction of
    pairs inside |cos| < band printed on it. `histograms[name]` has the columns lo, hi,
    count (the histogram) and texts, pairs, band, within_band (the same on every row)."""
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    names = list(histograms)
    fig, axes = plt.subplots(1, len(names), figsize=(4.8 * len(names), 4.0), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        h = _coarsen(histograms[name], DISPLAY_BINS)
        widths = (h["hi"] - h["lo"]).to_numpy()
        density = h["count"].to_numpy() / (h["count"].sum() * widths)
        ax.bar(h["lo"], density, width=widths, align="edge", color="tab:blue", alpha=0.8)
        band, first = float(h["band"].iloc[0]), h.iloc[0]
        ax.axvspan(-band, band, color="0.85", zorder=0)
        ax.text(
            0.02, 0.97,
            f"|cos| < {band:g}: {first['within_band']:.1%} of {int(first['pairs']):,} pairs\n"
            f"from {int(first['texts']):,} texts",
            transform=ax.transAxes, va="top", fontsize="small",
        )  # fmt: skip
        ax.set_xlabel("cosine similarity of two token embeddings in one text")
        ax.set_ylabel("density")
        ax.set_title(name, loc="left")
    fig.suptitle(stamped(title, fixture), fontsize="large", color="firebrick" if fixture else None)
    fig.tight_layout()
    save_figure(fig, outputs, provenance)
