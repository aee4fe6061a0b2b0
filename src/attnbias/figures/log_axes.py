"""A panel drawn from log10 values (metrics stored as logarithms, far below float64's
range): labelled as the log axis it is, and cut below where one curve falls so much deeper
than the others that it would flatten them (the curve leaves the axis, marked ▼, and the
caption says where it goes)."""

from __future__ import annotations

import pandas as pd
from matplotlib.ticker import FuncFormatter, MaxNLocator


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


def below_notes(left: list, panel_letter: str, labels: dict, x_shift: int = 0) -> list[str]:
    """The caption's words for the curves that leave panel `panel_letter`'s axis (`left`,
    from mark_below; `x_shift`: what the panel added to t)."""
    return [
        f"In {panel_letter}, {labels.get(name, name)} leaves the axis at "
        f"t = {t - x_shift:,} (\u25bc) and reaches 10^{end:.1f} at t = {last - x_shift:,}."
        for name, t, last, end in left
    ]
