"""The one table of how every figure draws an algorithm: its colour, marker and line style,
keyed by what the optimizer is (its algorithm, attnbias.optim.algorithm, as the
claims table keys its rows), never by its config name or its place in a legend. NGD is
the same blue in every figure that draws it, GD the same vermilion, and so on.

Colour and marker say the family (GD, NGD, PS, NGD with momentum, ...); the line style says
the variant, the same way in every family: solid the plain algorithm, dashed with a step
cap, dash-dot NGD per block (W and u normalised separately), dotted the stochastic
(mini-batch) version of the real-data runs. So SGD is drawn as GD (vermilion squares) in
dots, SNGD as NGD, SPS as PS; Adam is one algorithm, full-batch or not (as optim.algorithm
says).

There are more algorithms than colour-blind safe colours (seaborn's colorblind
palette, Okabe-Ito's hues, without its pale yellow, and black: 10), so a colour serves
several algorithms that no configured figure draws together, with a marker of its own;
the (colour, marker, line style) triple is unique, and tests/test_figure_styles.py checks
that no two algorithms of one configured figure share a colour. Curves of one algorithm
at several settings (a learning-rate sweep) keep its marker and get shades of its colour
and line styles of their own (`figure_looks`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attnbias.optim.algorithm import algorithm

# seaborn's "colorblind" palette (Okabe-Ito's hues), by name, and black
BLUE, ORANGE, GREEN, VERMILION = "#0173b2", "#de8f05", "#029e73", "#d55e00"
PURPLE, BROWN, PINK, GREY, SKY = "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#56b4e9"
BLACK = "#000000"
COLOURS = (BLUE, ORANGE, GREEN, VERMILION, PURPLE, BROWN, PINK, GREY, SKY, BLACK)

# the variants' line styles (seaborn dash specs: "" solid)
PLAIN, CAPPED, PER_BLOCK, STOCHASTIC = "", (5, 2), (6, 2, 1, 2), (1.5, 1.5)
VARIANTS = {
    PLAIN: "solid",
    CAPPED: "dashed: steps capped",
    PER_BLOCK: "dash-dot: W and u normalised separately",
    STOCHASTIC: "dotted: the mini-batch version of a full-batch algorithm (its colour and marker)",
}
# line styles of the further curves of one colour in a figure (`figure_looks`)
MORE_DASHES = ((3, 1.5), (8, 2, 2, 2), (1, 1), (4, 1, 1, 1, 1, 1), (10, 3))


@dataclass(frozen=True)
class Look:
    """How a curve is drawn: a colour (hex), a filled marker, a seaborn dash spec."""

    colour: str
    marker: str
    dashes: tuple | str = PLAIN

    def rgb(self) -> tuple[float, float, float]:
        value = int(self.colour.lstrip("#"), 16)
        return tuple(((value >> s) & 255) / 255 for s in (16, 8, 0))


# every algorithm key of attnbias.claims.coverage.ALGORITHMS, nsd by its norm
STYLES: dict[str, Look] = {
    "gd": Look(VERMILION, "s"),
    "sgd": Look(VERMILION, "s", STOCHASTIC),
    "ngd": Look(BLUE, "o"),
    "ngd-capped": Look(BLUE, "o", CAPPED),
    "per-block-ngd": Look(BLUE, "o", PER_BLOCK),
    "sngd": Look(BLUE, "o", STOCHASTIC),
    "ps": Look(GREEN, "^"),
    "ps-capped": Look(GREEN, "^", CAPPED),
    "sps": Look(GREEN, "^", STOCHASTIC),
    "ngd-mom": Look(PURPLE, "D"),
    "ngd-mom-capped": Look(PURPLE, "D", CAPPED),
    "joint-ngd": Look(ORANGE, "v"),
    "eq10": Look(SKY, "P"),
    "adam": Look(BROWN, "X"),
    # the geometry experiments' rules: with GD, NGD and Adam, ten colours in one figure
    "sign": Look(PINK, "*"),
    "nsd-max": Look(GREY, "<"),
    "nsd-lp": Look(BLACK, ">"),
    "nsd-spectral": Look(SKY, "H"),
    "spectral": Look(SKY, "h"),
    "muon": Look(PURPLE, "d"),
    "mirror": Look(ORANGE, "p"),
    "kq": Look(GREEN, "8"),
}


def algorithm_key(settings: dict, layout: str | None) -> str:
    """The STYLES key of an optimizer: its algorithm (optim.algorithm on its settings
    and the experiment's `layout`), normalized steepest descent told apart by its norm
    (max, spectral, an entrywise l_p). `layout` None: a real-data run, whose stochastic
    rule is its algorithm, as coverage names such a rule."""
    if layout is None:
        return settings["rule"]
    key = algorithm(settings, layout)
    if key == "nsd":
        norm = settings["norm"]
        return f"nsd-{norm}" if norm in ("max", "spectral") else "nsd-lp"
    return key


def look(key: str) -> Look:
    if key not in STYLES:
        raise ValueError(
            f"no figure style for algorithm {key!r}: add its row to "
            "attnbias.figures.algorithm_style.STYLES (docs/layout.md, 'Adding an optimizer')"
        )
    return STYLES[key]


def _shade(colour: str, k: int) -> str:
    """The k-th further shade of `colour` (k >= 1): darker and lighter in turn."""
    rgb = np.array(Look(colour, "o").rgb())
    towards = np.zeros(3) if k % 2 else np.ones(3)
    mixed = rgb + (0.3 + 0.15 * ((k - 1) // 2)) * (towards - rgb)
    return "#" + "".join(f"{round(255 * c):02x}" for c in mixed)


def figure_looks(keys: dict[str, str]) -> dict[str, Look]:
    """How one figure draws its curves ({curve: algorithm key}, in legend order): each its
    algorithm's Look; where curves share a colour (one algorithm at several settings), the
    first keeps it and the others get shades of it and line styles of their own."""
    looks = {name: look(key) for name, key in keys.items()}
    seen: dict[str, int] = {}
    for name, base in list(looks.items()):
        k = seen.get(base.colour, 0)
        seen[base.colour] = k + 1
        if k:
            looks[name] = replace(
                base, colour=_shade(base.colour, k), dashes=MORE_DASHES[(k - 1) % len(MORE_DASHES)]
            )
    return looks


def algorithms_of(optimizers: dict[str, dict], layout: str | None) -> dict[str, str]:
    """{optimizer name: algorithm_key} of `optimizers` ({name: config settings}) of an
    experiment of `layout` (None: real data): what a figure job hands its drawing."""
    return {name: algorithm_key(s, layout) for name, s in optimizers.items()}


def variants_note(looks) -> str:
    """The caption's words on the line styles that `looks` draw, beyond solid."""
    used = [VARIANTS[d] for d in VARIANTS if d != PLAIN and any(lk.dashes == d for lk in looks)]
    return f"Line styles: {'; '.join(used)}." if used else ""
