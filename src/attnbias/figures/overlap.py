"""Curves that cover each other: which optimizers' mean curves coincide in a panel, and the
words that name them ('NGD ≈ PS') in the panel and in the caption, since then mainly their
markers tell them apart."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

# Mean curves of two optimizers closer than this fraction of the panel's height (in the
# axis' own coordinate: log10 on a log axis) at every logged t nearly cover each other; the
# legend says so, since then mainly their markers tell them apart.
OVERLAP_HEIGHT = 0.05
# ... and, on a log axis, within this factor of each other at every t: on a panel that
# spans thousands of decades, 5% of its height is a hundred, and curves that far apart are
# not "A ≈ B" (fig2_uncapped (f): NGD's step 10^134 against GD's 1)
OVERLAP_FACTOR = 2.0
# the scales `coinciding` knows: "decades" is a panel drawn from log10 values on a linear
# axis with ticks 10^k (drawing.py's natural-log metrics), a log axis to the reader
LOG_SCALES = ("log", "decades")


def drawn_means(data: pd.DataFrame, scale: str) -> pd.DataFrame:
    """Iteration x optimizer: the mean over seeds of `value` in the axis' own coordinate,
    as the panel draws it (lines.seed_summary): on a log axis the mean of log10, so the
    geometric mean; on "decades" the values are log10 already."""
    y = data["value"].astype(float)
    if scale == "log":
        y = np.log10(y.where(y > 0))
    elif scale == "symlog":
        y = np.sign(y) * np.log10(1 + y.abs())
    frame = data[["iteration", "optimizer"]].assign(y=y)
    return frame.groupby(["iteration", "optimizer"])["y"].mean().unstack("optimizer")


def coinciding(
    data: pd.DataFrame, yscale: str, height: float, limits: tuple | None = None
) -> list[tuple[str, str]]:
    """Pairs of optimizers whose drawn mean curves in `data` lie within `height` of the
    panel's height of each other wherever both are drawn, on a `yscale` axis ("linear",
    "log", "symlog" with linthresh 1, or "decades": LOG_SCALES), and on a log axis also
    within OVERLAP_FACTOR of each other. `limits`: the axis' range in its coordinate, where
    a curve that leaves it is drawn on its edge: judged there for the height, but on its
    values for the factor."""
    means = drawn_means(data, yscale)
    shown = means.clip(*limits) if limits is not None else means
    span = np.nanmax(shown.to_numpy()) - np.nanmin(shown.to_numpy()) if means.size else 0.0
    if not np.isfinite(span) or span <= 0:
        return []
    most = np.log10(OVERLAP_FACTOR) if yscale in LOG_SCALES else np.inf
    names = list(means.columns)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            gap = (shown[a] - shown[b]).abs().dropna()
            apart = (means[a] - means[b]).abs().dropna()
            if len(gap) and gap.max() <= height * span and apart.max() <= most:
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


PANEL_TEXT_WIDTH = 40  # characters: a group's words on more lines beyond, inside its panel


def _wrapped(names: list[str]) -> str:
    """'A ≈ B ≈ C' on lines of at most PANEL_TEXT_WIDTH characters, broken after a '≈'."""
    lines = [names[0]]
    for name in names[1:]:
        # room kept for the " ≈" that ends a broken line
        if len(lines[-1]) + len(ALMOST) + len(name) > PANEL_TEXT_WIDTH - len(ALMOST.rstrip()):
            lines[-1] += ALMOST.rstrip()
            lines.append(name)
        else:
            lines[-1] += ALMOST + name
    return "\n".join(lines)


def say_coinciding(ax, groups: list[tuple[str, ...]], labels: dict) -> None:
    """Name the curves that cover each other inside the panel ('NGD ≈ PS'), where a
    reader looks for the missing line."""
    if groups:
        texts = [_wrapped([labels.get(n, n) for n in group]) for group in groups]
        blank = plt.Line2D([], [], ls="", marker="")
        ax.legend(
            [blank] * len(texts), texts, loc="best", handlelength=0, handletextpad=0,
            frameon=True, framealpha=0.8, borderpad=0.3,
        )  # fmt: skip


def overlap_note(overlaps: dict, labels: dict) -> str:
    """The caption's note on the curves that coincide ({(a, b, ...): [panel letters]})."""
    return (
        f"Curves whose means lie within {OVERLAP_HEIGHT:.0%} of a panel's height of each "
        f"other at every t (on a log axis, also within a factor of {OVERLAP_FACTOR:g}), "
        "named in their panels (A \u2248 B), where the markers tell them apart: "
        f"{'; '.join(overlap_labels(overlaps, labels))}."
    )


def crowded_note(overlaps: dict, labels: dict) -> str:
    """The caption's note on coinciding curves too many to name in their panels (a sweep's
    runs), {(a, b, ...): [panel letters]}; empty where there are none."""
    if not overlaps:
        return ""
    return (
        f" Curves whose means lie within {OVERLAP_HEIGHT:.0%} of a panel's height of each "
        "other at every logged step, too many to name in the panels: "
        f"{'; '.join(overlap_labels(overlaps, labels))}."
    )
