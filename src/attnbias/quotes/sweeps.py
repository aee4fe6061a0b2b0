"""The docs' numbers from the sweeps (optional targets, `results/sweeps/<name>.pdf`): counts
of settings, values at a setting, and docs/findings.md's table of the eta sweep, generated
whole. Where a sweep is not built, its numbers read "not built here"."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.quotes.build import Build
from attnbias.quotes.numbers import MINUS
from attnbias.quotes.quote import Section, Source, markers


def target(name: str) -> str:
    return f"results/sweeps/{name}.pdf"


def _where(points: pd.DataFrame, where: dict) -> pd.DataFrame:
    chosen = points
    for column, value in where.items():
        chosen = chosen[np.isclose(chosen[column], value) if _numeric(value) else
                        chosen[column] == value]  # fmt: skip
    return chosen


def _numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def sweep_count(name: str, claim: str | None = None, holds: bool | None = None) -> Source:
    """The number of settings of a sweep (where `claim` is `holds`, if given)."""

    def read(b: Build) -> int:
        points = b.sweep_points(name)
        return len(points) if claim is None else int((points[claim] == holds).sum())

    what = f"sweep {name}: settings" + (f" where {claim} is {holds}" if claim else "")
    return Source(what, read, target(name))


def sweep_value(name: str, where: dict, column: str, claim: str | None = None) -> Source:
    """A column of the sweep's points (the seed summaries `<metric>_<optimizer>`, `seeds`)
    at the settings matching `where`; "failing_seeds": on how many seeds `claim` fails."""

    def read(b: Build) -> np.ndarray:
        points = _where(b.sweep_points(name), where)
        if column == "failing_seeds":
            return (points["seeds"] - points[f"{claim}_seeds"]).to_numpy(dtype=float)
        return points[column].to_numpy(dtype=float)

    return Source(f"sweep {name}: {column} {claim or ''} at {where}", read, target(name))


def held_at(name: str, axis: str, claim: str, holds: bool = True, some_seed: bool = False):
    """True where `claim` is `holds` exactly at the given values of `axis` (some_seed: where
    it holds on at least one seed), as in "fails at eta = 0.1 only"."""

    def source(*values: float) -> Source:
        def read(b: Build) -> bool:
            points = b.sweep_points(name)
            chosen = points[f"{claim}_seeds"] > 0 if some_seed else points[claim] == holds
            found = sorted(points.loc[chosen, axis])
            return len(found) == len(values) and bool(np.allclose(found, sorted(values)))

        which = "on some seed" if some_seed else ("holds" if holds else "fails")
        what = f"sweep {name}: {claim} {which} exactly at {axis} in {list(values)}"
        return Source(what, read, target(name))

    return source


# docs/findings.md's table of the eta sweep: per step, each claim's quantity over the
# seeds of Eq. 10 and on how many seeds it holds (the sweep's `<claim>_seeds`)
ETA = "optimizers.eq10.lr"
ETA_COLUMNS = (  # (heading, the sweep's metric, its sign as shown, its claim)
    ("Lem. 11 (iii) growth", "loss_ratio_growth", 1, "lem11_ratio_bounded"),
    ("Thm. 2 k", "loss_exponent", -1, "thm2_exponent"),  # the sweep stores −k
    ("Thm. 3 slope", "rate_W_lnln", 1, "thm3_rate"),
    ("Thm. 4 log10(1 − cos u)", "final_log10_gap_u", 1, "thm4_u_direction"),
    ("below GD in W throughout", None, 1, "eq10_below_gd_W"),
)


def _two_digits(value: float) -> str:
    return f"{value:.2g}".replace("-", MINUS)


def _spread(values: np.ndarray) -> str:
    low, high = _two_digits(values.min()), _two_digits(values.max())
    return low if low == high else f"{low} to {high}"


def eta_table(b: Build) -> str:
    """The rows of the eta sweep, one per step (the default's marked), as Markdown; each
    heading with its claim's threshold, from the sweep's config as it ran."""
    runs, points = b.sweep_runs("eta_cond1"), b.sweep_points("eta_cond1")
    config = b.provenance("sweeps/eta_cond1")["config"]
    claims = config["sweeps"]["eta_cond1"]["claims"]
    base = config["experiments"][config["sweeps"]["eta_cond1"]["base"]]
    default_eta = float(base["optimizers"]["eq10"]["lr"])
    head = ["η"]
    for heading, metric, sign, claim in ETA_COLUMNS:
        if metric is not None:
            bound = "≤" if sign > 0 else "≥"
            heading += f" ({bound} {_two_digits(sign * claims[claim]['threshold'])})"
        head.append(heading)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for point in points.sort_values(ETA).to_dict("records"):
        eta = point[ETA]
        mine = runs[(runs["point"] == point["point"]) & (runs["optimizer"] == "eq10")]
        cells = [f"{eta:g}" + (" (default)" if np.isclose(eta, default_eta) else "")]
        for _, metric, sign, claim in ETA_COLUMNS:
            held = f"{int(point[f'{claim}_seeds'])}/{int(point['seeds'])}"
            if metric is None:
                cells.append(held)
                continue
            values = sign * mine[metric].to_numpy(dtype=float)
            verb = "holds " if claim == "lem11_ratio_bounded" else ""  # the first: in words
            cells.append(f"{_spread(values)}: {verb}{held}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


ETA_MARKERS = markers("eta sweep table")
eta_cond1_table = Section(
    *ETA_MARKERS,
    Source(
        "the eta sweep's table, from results/sweeps/eta_cond1_points.csv and eta_cond1.csv",
        # the table stands in a list item: its lines are indented by two spaces
        lambda b: "\n  ".join([ETA_MARKERS[0], *eta_table(b).splitlines(), ETA_MARKERS[1]]),
        target("eta_cond1"),
    ),
)
