"""How every figure draws an algorithm: colour by family, marker and line style by member,
keyed by what the optimizer is (its spec's look key, optim.spec, as the claims
table keys its rows), never by its config name or its place in a legend. Each rule's module
gives its algorithms' Looks (attnbias.optim.rule.Look: family, marker, line); this module
gives the colours and draws the line styles.

Colours are assigned per figure, by family: each family of the configured figures has its
colour (FAMILY_COLOURS), the same in every figure, so an algorithm looks the same wherever
it appears; a family without one (a new rule's) takes, in each figure, the first colour no
other family drawn there holds. The palette is colour-blind safe (seaborn's colorblind
palette, Okabe-Ito's hues, without its pale yellow, and black). Within a family, members
differ by marker and line style; the line styles of the variants mean the same in every
family: solid the plain algorithm, dashed with a step cap, dash-dot NGD per block (W and u
normalised separately, without Eq. 10's step factors: Eq. 10, per block too, is a family of
its own, solid), dotted the stochastic (mini-batch) version of the real-data runs.
So SGD is drawn as GD (vermilion squares) in dots, SNGD as NGD, SPS as PS; Adam is one
algorithm, full-batch or not. Curves of one algorithm at several settings (a
learning-rate sweep) keep its marker and get shades of its colour and line styles of their
own (`figure_looks`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attnbias.optim import rules

# seaborn's "colorblind" palette (Okabe-Ito's hues), by name, and black
BLUE, ORANGE, GREEN, VERMILION = "#0173b2", "#de8f05", "#029e73", "#d55e00"
PURPLE, BROWN, PINK, GREY, SKY = "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#56b4e9"
BLACK = "#000000"
COLOURS = (BLUE, ORANGE, GREEN, VERMILION, PURPLE, BROWN, PINK, GREY, SKY, BLACK)

# each family's colour (rules' Look.family); the paper's algorithms first
FAMILY_COLOURS = {
    "gd": VERMILION,  # GD, SGD, and GD on K, Q
    "ngd": BLUE,
    "ps": GREEN,
    "ngd-mom": PURPLE,
    "joint-ngd": ORANGE,
    "eq10": SKY,
    "adam": BROWN,
    "sign": PINK,  # steepest descent in the max norm: sign descent, NSD l_inf
    "lp": BLACK,  # NSD and mirror descent in an entrywise l_p
    "spectral": GREY,  # spectral descent, Muon, NSD spectral
}

# the line styles a Look names, as seaborn dash specs ("" solid), and what a caption says
# of each beyond solid
PLAIN, CAPPED, PER_BLOCK, STOCHASTIC = "", (5, 2), (6, 2, 1, 2), (1.5, 1.5)
DASHES = {
    "solid": PLAIN,
    "capped": CAPPED,
    "per-block": PER_BLOCK,
    "stochastic": STOCHASTIC,
    "long-dash": (10, 3),
    "dash-dot-dot": (6, 2, 1, 2, 1, 2),
}
_MEMBER = "long dashes, dash-dot-dot: another algorithm of its family (its colour, its own marker)"
VARIANTS = {
    PLAIN: "solid",
    CAPPED: "dashed: steps capped",
    # Eq. 10 normalises W and u separately too, but is a family of its own, drawn solid
    PER_BLOCK: "dash-dot: NGD with W and u normalised separately, without Eq. 10's step factors",
    STOCHASTIC: "dotted: the mini-batch version of a full-batch algorithm (its colour and marker)",
    DASHES["long-dash"]: _MEMBER,
    DASHES["dash-dot-dot"]: _MEMBER,
}
# line styles of the further curves of one algorithm in a figure (`figure_looks`)
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


def _drawn(member, colour: str) -> Look:
    """A rule module's Look (family, marker, line) drawn in `colour`."""
    return Look(colour, member.marker, DASHES[member.line])


# the looks of the rules' algorithms whose family has a colour of its own: what every
# figure draws them as
STYLES: dict[str, Look] = {
    key: _drawn(member, FAMILY_COLOURS[member.family])
    for rule in rules.RULES.values()
    for key, member in rule.looks.items()
    if member.family in FAMILY_COLOURS
}


def _member(key: str):
    """The Look that a rule's module gives the look key `key` (read from the registry)."""
    for rule in rules.RULES.values():
        if key in rule.looks:
            return rule.looks[key]
    raise ValueError(
        f"no figure style for algorithm {key!r}: give it a Look in its rule's module "
        "(attnbias.optim.rules; docs/layout.md, 'Adding an optimizer')"
    )


def look(key: str) -> Look:
    """How every figure draws algorithm `key` (of a family with a colour of its own)."""
    member = _member(key)
    if member.family not in FAMILY_COLOURS:
        raise ValueError(
            f"algorithm {key!r} is of family {member.family!r}, which has no colour of its "
            "own: each figure gives it one (figure_looks)"
        )
    return _drawn(member, FAMILY_COLOURS[member.family])


def family_colours(keys) -> dict[str, str]:
    """{family: colour} of the algorithms `keys` drawn in one figure: each family its own
    colour, and one without (a new rule's) the first colour no family of the figure holds."""
    families = list(dict.fromkeys(_member(k).family for k in keys))
    colours = {f: FAMILY_COLOURS[f] for f in families if f in FAMILY_COLOURS}
    free = [c for c in COLOURS if c not in colours.values()]
    for family in (f for f in families if f not in colours):
        if not free:
            raise ValueError(f"more families in one figure than colours ({len(COLOURS)})")
        colours[family] = free.pop(0)
    return colours


def _shade(colour: str, k: int) -> str:
    """The k-th further shade of `colour` (k >= 1): darker and lighter in turn."""
    rgb = np.array(Look(colour, "o").rgb())
    towards = np.zeros(3) if k % 2 else np.ones(3)
    mixed = rgb + (0.3 + 0.15 * ((k - 1) // 2)) * (towards - rgb)
    return "#" + "".join(f"{round(255 * c):02x}" for c in mixed)


def figure_looks(keys: dict[str, str]) -> dict[str, Look]:
    """How one figure draws its curves ({curve: algorithm key}, in legend order): each its
    algorithm's Look in its family's colour; where curves share an algorithm (one
    algorithm at several settings), the first keeps its look and the others get shades of
    its colour and line styles of their own."""
    colours = family_colours(keys.values())
    looks = {}
    for name, key in keys.items():
        member = _member(key)
        looks[name] = _drawn(member, colours[member.family])
    seen: dict[Look, int] = {}
    for name, base in list(looks.items()):
        k = seen.get(base, 0)
        seen[base] = k + 1
        if k:
            looks[name] = replace(
                base, colour=_shade(base.colour, k), dashes=MORE_DASHES[(k - 1) % len(MORE_DASHES)]
            )
    return looks


def algorithms_of(specs: dict, layout: str | None) -> dict[str, str]:
    """{optimizer name: its look key} of `specs` ({name: spec}, optim.spec.resolve) of an
    experiment of `layout` (None: real data, drawn as its rule): what a figure job hands its
    drawing."""
    return {name: spec.look_key(layout) for name, spec in specs.items()}


def variants_note(looks) -> str:
    """The caption's words on the line styles that `looks` draw, beyond solid."""
    used = [VARIANTS[d] for d in VARIANTS if d != PLAIN and any(lk.dashes == d for lk in looks)]
    used = list(dict.fromkeys(used))
    return f"Line styles: {'; '.join(used)}." if used else ""
