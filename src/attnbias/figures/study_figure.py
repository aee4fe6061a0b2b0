"""The global-convergence study's figure (results/global_convergence.*): the fraction of
random starts that reach W_mm's direction by setting and by initial scale, and the gaps
where they end."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from attnbias.figures import caption as captions  # noqa: E402
from attnbias.figures.algorithm_style import figure_looks  # noqa: E402
from attnbias.figures.panels import letter  # noqa: E402
from attnbias.figures.save import save_figure  # noqa: E402
from attnbias.figures.style import FULL_WIDTH, apply_theme  # noqa: E402

TITLE = "Global convergence over random initial directions and scales"
FALLING = ("undecided", "slower")  # the outcomes of runs whose gap still falls


def _outcomes(runs: pd.DataFrame, words: dict) -> str:
    """How the runs that did not reach ended, per optimizer (studies.global_outcomes; words:
    outcome -> its words)."""
    missed = runs[runs["outcome"] != "reached"]
    if missed.empty:
        return "Every run reached."
    per = missed.groupby(["label", "outcome"], sort=False).size()
    parts = "; ".join(
        f"{label}: " + ", ".join(f"{n} {words[o]}" for o, n in per[label].items())
        for label in dict.fromkeys(missed["label"])
    )
    return (
        f"Runs that did not reach ({parts}; pale in (b)): still falling means over the last decade "
        "(slope of ln(1 - cos) against ln ln t) and the last logged interval, and reads "
        "undecided at this horizon; left float64's range: a value stopped being finite; "
        "failed: the gap no longer falls."
    )


def _caption(runs: pd.DataFrame, settings: dict, words: dict) -> str:
    knobs = "; ".join(
        f"{name}: " + (", ".join(f"{k} {v:g}" for k, v in knob.items()) or "plain Example 1")
        for name, knob in settings["settings"].items()
    )
    size = settings["data"]
    return (
        f"{settings['inits']} random initial W0 per setting and optimizer, ||W0|| cycling over "
        f"{settings['scales']}, {settings['iterations']} steps, n={size['n']}, T={size['T']}, "
        f"d={size['d']}. Reached: 1 - cos(W_t, W_mm) < {settings['threshold']:g} at a logged "
        f"iteration (dashed in (c)). {_outcomes(runs, words)} "
        f"Effective gap: the gap of W restricted to the query tokens' span (the part of W0 "
        f"outside it never moves). Settings: {knobs}."
    )


def draw(
    runs: pd.DataFrame,
    summary: pd.DataFrame,
    *,
    legend,
    algorithms: dict,
    settings,
    outcome_words: dict,
    outputs,
    provenance: dict | None = None,
):
    """The global-convergence study: fractions reached by setting and by scale, and gaps.

    `algorithms`: optimizer -> its algorithm_style key (its colour, as in every figure);
    `outcome_words`: each run outcome (column `outcome`) -> the caption's words for it.
    `provenance` (attnbias.workflow.provenance.collect) goes into each file's metadata.
    """
    apply_theme()
    order = list(legend.values())
    looks = figure_looks({name: algorithms[name] for name in legend})
    # each algorithm's own colour, unsaturated: as the line figures draw it
    hues = {"palette": {legend[n]: lk.colour for n, lk in looks.items()}, "saturation": 1}
    runs = runs.assign(label=runs["optimizer"].map(legend))
    summary = summary.assign(label=summary["optimizer"].map(legend))
    fig, axes = plt.subplots(1, 3, figsize=(FULL_WIDTH, 2.9), layout="constrained")
    sns.barplot(
        summary,
        x="setting",
        y="fraction_reached",
        hue="label",
        hue_order=order,
        **hues,
        ax=axes[0],
    )
    axes[0].set(ylim=(0, 1.05), ylabel="fraction of runs reaching W_mm", xlabel="setting")
    # pale behind: reached or still falling (undecided at this horizon); solid: reached
    by_scale = (
        runs.assign(falling=runs["outcome"].isin(["reached", *FALLING]))
        .groupby(["scale", "label"], as_index=False)[["reached", "falling"]]
        .mean()
    )
    for column, alpha in (("falling", 0.35), ("reached", 1.0)):
        sns.barplot(
            by_scale,
            x="scale",
            y=column,
            hue="label",
            hue_order=order,
            **hues,
            alpha=alpha,
            ax=axes[1],
            legend=False,
        )
    axes[1].set(
        ylim=(0, 1.05),
        ylabel="reached (pale: or still falling)",
        xlabel=r"initial scale $\|W_0\|_F$",
    )
    gaps = runs[runs["final_effective_gap"] > 0]
    sns.boxplot(
        gaps,
        x="setting",
        y="final_effective_gap",
        hue="label",
        hue_order=order,
        **hues,
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
    text = captions.compose(TITLE, _caption(runs, settings, outcome_words))
    save_figure(fig, outputs, provenance, caption=text)
