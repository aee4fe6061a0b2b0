"""results/geometry.pdf: which norm's max-margin each optimizer finds (beyond the paper).

One row of two panels per geometry experiment (data model; self- or cross-attention, as its
data carry queries or not): (a) the optimizer x norm
matrix of the final alignment <W_t, W*_N> / (||W_t||_F ||W*_N||_F), mean over seeds, the
cell of the norm each optimizer is expected to find framed; (b) each optimizer's alignment
with its own expected norm's solution against t (log t), mean over seeds. Reads the
aggregate tables only (metrics align_<norm>, attnbias.training.geometry_measures).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from attnbias.figures import caption as captions  # noqa: E402
from attnbias.figures import style  # noqa: E402
from attnbias.figures.algorithm_style import figure_looks  # noqa: E402
from attnbias.figures.lines import MARKER_SPACING  # noqa: E402
from attnbias.figures.save import save_figure  # noqa: E402
from attnbias.training.geometry_names import (  # noqa: E402
    OPT_MOVED,
    TOKENS_LOCAL,
    is_unique,
    metric_name,
)

ROW_HEIGHT = 3.0  # in: one data model's two panels (less where the page needs it)
LEGEND_HEIGHT = 0.7  # in: the shared legend under the rows
PANEL_TITLES = ("final alignment with each W*_N", "alignment with own norm's W*_N")


def final_alignment(table: pd.DataFrame, order: list[str], norms: list[str]) -> pd.DataFrame:
    """Optimizer x norm: the alignment at the last logged iteration, mean over seeds."""
    last = table[table["iteration"] == table["iteration"].max()]
    out = pd.DataFrame(index=order, columns=norms, dtype=float)
    for norm in norms:
        rows = last[last["metric"] == metric_name("align", norm)]
        means = rows.groupby("optimizer", observed=True)["value"].mean()
        out[norm] = [float(means[o]) for o in order]
    return out


def own_alignment(table: pd.DataFrame, optimizer: str, norm: str) -> pd.DataFrame:
    """One optimizer's alignment with its expected norm's solution: iteration -> the mean
    over seeds (columns mean, low, high: the smallest and largest seed)."""
    rows = table[
        (table["optimizer"] == optimizer) & (table["metric"] == metric_name("align", norm))
    ]
    grouped = rows.groupby("iteration")["value"]
    return pd.DataFrame({"mean": grouped.mean(), "low": grouped.min(), "high": grouped.max()})


def _matrix_panel(ax, matrix: pd.DataFrame, labels: list[str], expected: list) -> None:
    """The final alignments, each optimizer's expected norm framed (none where no published
    result names one: OptimizerSpec.implicit_norm)."""
    values = matrix.to_numpy()
    # colour from the smallest cell (rounded down to a tenth) to 1: the differences between
    # norms are what the panel is for; the numbers give the values
    low = min(np.floor(np.nanmin(values) * 10) / 10, 0.9)
    image = ax.imshow(values, cmap="cividis", vmin=low, vmax=1.0, aspect="auto")
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            light = image.norm(value) < 0.55  # white on the dark half of cividis
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=style.MIN_FONT_PT,
                    color="white" if light else "black")  # fmt: skip
    for i, norm in enumerate(expected):
        if norm is None:
            continue
        j = list(matrix.columns).index(norm)
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#d55e00", lw=1.8))
    ax.set_xticks(range(len(matrix.columns)), list(matrix.columns))
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("SVM norm N (framed: the optimizer's expected norm)")
    ax.grid(False)


def _curves_panel(ax, table, order, labels, expected, looks) -> list:
    """`looks`: every experiment's optimizers' (algorithm_style.figure_looks), so that an
    optimizer keeps its algorithm's colour, marker and line style in every row."""
    handles = []
    for k, opt in enumerate(order):
        if expected[k] is None:  # no published expected norm: no own norm to follow
            continue
        curve = own_alignment(table, opt, expected[k])
        curve = curve[curve.index > 0]  # log t: the start (t = 0) is left out
        look = looks[opt]
        (line,) = ax.plot(
            curve.index, curve["mean"], color=look.colour, marker=look.marker,
            markersize=style.MARKER_SIZE, markeredgewidth=0,
            label=f"{labels[opt]} ({expected[k]})",
            # markers thinned, the start offset by curve: coinciding curves alternate
            markevery=(MARKER_SPACING * (k + 0.5) / len(order), MARKER_SPACING),
        )  # fmt: skip
        if look.dashes:
            line.set_dashes(look.dashes)
        ax.fill_between(curve.index, curve["low"], curve["high"], color=look.colour, alpha=0.15,
                        lw=0)  # fmt: skip
        handles.append(line)
    ax.set_xscale("log")
    ax.set_xlabel("iteration t")
    ax.set_ylabel("alignment with own norm's W*")
    return handles


def draw(tables: dict, settings: dict, algorithms: dict, outputs,
         provenance: dict | None = None, hypotheses: dict | None = None) -> str:  # fmt: skip
    """Draw every geometry experiment (`tables`: name -> aggregate table; `settings`: name
    -> GeometryConfig.figure's entry; `algorithms`: optimizer -> its algorithm_style key)
    and write `outputs` (pdf, png, caption). Returns the caption."""
    style.apply_theme()
    names = list(settings)
    # three experiments (self- and cross-attention) fit a page at rows of about 2.8 in
    height = min(ROW_HEIGHT * len(names) + LEGEND_HEIGHT, style.MAX_HEIGHT)
    fig, axes = plt.subplots(
        len(names), 2, figsize=(style.FULL_WIDTH, height), squeeze=False,
        gridspec_kw={"width_ratios": [1.0, 1.15]}, layout="constrained",
    )  # fmt: skip
    legend = {}
    everyone = list(dict.fromkeys(o for name in names for o in settings[name]["order"]))
    looks = figure_looks({o: algorithms[o] for o in everyone})
    for row, name in enumerate(names):
        s, table = settings[name], tables[name]
        order, labels = s["order"], s["labels"]
        expected = [s["expected"][o] for o in order]
        matrix = final_alignment(table, order, s["norms"])
        _matrix_panel(axes[row, 0], matrix, [labels[o] for o in order], expected)
        handles = _curves_panel(axes[row, 1], table, order, labels, expected, looks)
        legend.update({h.get_label(): h for h in handles})
        for col, what in enumerate(PANEL_TITLES):
            tag = "ab"[col] + (f"{row + 1}" if len(names) > 1 else "")
            axes[row, col].set_title(f"({tag}) {_row_name(s)}\n{what}", loc="left")
    fig.legend(legend.values(), legend.keys(), loc="outside lower center", ncol=4, frameon=False)
    text = caption(tables, settings, hypotheses or {})
    save_figure(fig, outputs, provenance, text)
    return text


def _row_name(s: dict) -> str:
    """A row's data model and its attention: cross where its data carry queries Z."""
    return f"{s['data']['model']}, {s.get('attention', 'self')}-attention"


def selected_tokens_text(table: pd.DataFrame, labels: dict) -> str:
    """Where each run was measured against the tokens its attention selects (tokens:
    selected): how many runs end on globally optimal tokens, and each run that does not,
    with its check (training.geometry_measures: opt_moved, tokens_locally_optimal)."""
    last = table[table["iteration"] == table["iteration"].max()]
    moved = last[last["metric"] == OPT_MOVED].set_index(["optimizer", "seed"])["value"]
    local = last[last["metric"] == TOKENS_LOCAL].set_index(["optimizer", "seed"])["value"]
    runs = [(o, seed) for o, seed in moved.index]
    local_only, neither = [], []
    for o, seed in runs:
        if moved[(o, seed)] == 0:
            continue
        run = f"{labels.get(o, o)} seed {seed} ({int(moved[(o, seed)])} sequence(s))"
        (local_only if local[(o, seed)] == 1 else neither).append(run)
    text = (
        f"At the last iteration the selected tokens are globally optimal on "
        f"{len(runs) - len(local_only) - len(neither)} of {len(runs)} runs"
    )
    if local_only:
        text += "; locally, not globally optimal (Tarzanagh et al.'s check) on " + ", ".join(
            local_only
        )
    if neither:
        text += "; not locally optimal on " + ", ".join(neither)
    return text + "."


def seeds_text(first: int, count: int) -> str:
    """The reported seeds in words; where they start above 0, why (the config's first_seed:
    the seeds below it chose the step lengths)."""
    if count == 1:
        seeds = f"1 seed ({first})"
    else:
        seeds = f"{count} seeds ({first} to {first + count - 1})"
    if first == 0:
        return seeds
    return f"{seeds}; seeds below {first} chose constants (the step lengths) and are not reported"


def not_unique(table: pd.DataFrame, norms: list[str]) -> dict[str, str]:
    """{norm: why its alignments are not evidence} for each norm whose SVM is not unique on
    some run at the last logged iteration, or not probed on every run (face_cos_<norm>,
    svm.uniqueness; a NaN, not probed, is not written)."""
    last = table[table["iteration"] == table["iteration"].max()]
    runs = len(last[["optimizer", "seed"]].drop_duplicates())
    out = {}
    for norm in norms:
        cosines = last[last["metric"] == metric_name("face_cos", norm)]["value"]
        if len(cosines) and not all(is_unique(c) for c in cosines):
            out[norm] = f"not unique (an optimal solution has cosine {cosines.min():.2f})"
        elif len(cosines) < runs:
            out[norm] = "not probed" if not len(cosines) else "not probed on every run"
    return out


def _found(s: dict, matrix: pd.DataFrame, o: str) -> str:
    """An optimizer's final alignment with its expected norm's solution, and the best."""
    best = f"best: {matrix.loc[o].idxmax()}, {matrix.loc[o].max():.3f}"
    norm = s["expected"][o]
    if norm is None:
        return f"{s['labels'][o]}: no published expected norm, none framed ({best})"
    return f"{s['labels'][o]}: {matrix.loc[o, norm]:.3f} with its {norm} solution ({best})"


def caption(tables: dict, settings: dict, hypotheses: dict) -> str:
    """What the figure is drawn from (data, model, sizes) and its numbers (final alignments)."""
    parts = [
        "Beyond the paper: which norm's attention-SVM solution W*_N (the max-margin "
        "direction under norm N) does each optimizer's W_t approach? Left: the alignment "
        "<W_t, W*_N> / (||W_t||_F ||W*_N||_F) at the last iteration, mean over seeds, for each "
        "optimizer (rows) and norm (columns), coloured from the smallest cell (rounded down "
        "to a tenth) to 1; the framed cell is the norm the optimizer is expected to find "
        "(linear models: Fan, Schmidt, Thrampoulidis 2025; attention: "
        "Julistiono, Tarzanagh, Azizan 2024 for mirror descent; Tarzanagh et al. 2023 and "
        "Sheen et al. 2024 for separate K, Q). Right: each optimizer's alignment with its "
        "expected norm's solution against t (log axis), mean over seeds, the band from the "
        "smallest to the largest seed; the legend names the expected norm."
    ]
    for name, s in settings.items():
        params = ", ".join(f"{k} = {v}" for k, v in s["data"].get("params", {}).items())
        matrix = final_alignment(tables[name], s["order"], s["norms"])
        found = "; ".join(_found(s, matrix, o) for o in s["order"])
        decoder = (
            "W and u trained jointly (each run measured against the SVMs of the tokens "
            "optimal under its own decoder, Def. 1)"
            if s["train"]["train_u"]
            else "fixed decoder u"
        )
        tokens = ""
        if s.get("tokens") == "selected":
            decoder += (
                "; each run measured against the SVMs of the tokens its own attention selects "
                "at the logged iteration (at the last: its locally optimal tokens, as "
                "Tarzanagh et al. and Julistiono et al. compare a run)"
            )
            tokens = " " + selected_tokens_text(tables[name], s["labels"])
        if s.get("attention") == "cross":
            decoder = "cross-attention (queries z_i apart from the tokens), " + decoder
        doubtful = not_unique(tables[name], s["norms"])
        caveat = (
            " Alignment is not evidence for these SVMs: "
            + "; ".join(f"{n}, {why}" for n, why in doubtful.items())
            + ". It measures which optimal solution the solver returned; the claims judge "
            "those rows by the margin ratios."
            if doubtful
            else ""
        )
        optimizers = "; ".join(f"{s['labels'][o]}: {s['settings'][o]}" for o in s["order"])
        parts.append(
            f"{s['title']}: {s['description']} Data model {s['data']['model']} ({params}), "
            f"{decoder}, {seeds_text(s['first_seed'], s['seeds'])}, "
            f"{s['train']['iterations']} iterations "
            f"({s['train']['loss']} loss). Optimizers: {optimizers}. "
            f"{hypotheses.get(name, '')} Final alignment with "
            f"the expected norm's solution: {found}.{tokens}{caveat}"
        )
    return captions.compose("Which max-margin does an optimizer find?", *parts)
