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


def overlap_note(overlaps: dict, labels: dict) -> str:
    """The caption's note on the curves that coincide ({(a, b, ...): [panel letters]})."""
    return (
        f"Curves whose means lie within {OVERLAP_HEIGHT:.0%} of a panel's height of each "
        "other at every t, named in their panels (A \u2248 B), where the markers tell "
        f"them apart: {'; '.join(overlap_labels(overlaps, labels))}."
    )
