"""docs/regime.md's tables of fig2's caps, generated from a build's runs so that no number of
them is typed by hand: each adaptive method's largest step over every step of its uncapped
run (fig2_uncapped's max_log_step_W at the last iteration), against the largest logged
step alone (what the tables read before every step was tracked), the cap the rule gives
(attnbias.optim.cap_rule) and the cap the config sets; then, for a ladder of caps, the
first logged t by which each uncapped step has reached it: where that cap would bind (a
capped run is its uncapped run until then, and the uncapped run after it where never).

    python -m attnbias.quotes write
"""

from __future__ import annotations

import math

import numpy as np

from attnbias.optim import cap_rule
from attnbias.quotes.build import Build
from attnbias.quotes.quote import markers

START, END = markers("fig2 cap tables")
UNCAPPED, CAPPED = "fig2_uncapped", "fig2"
# each cap's method, whose uncapped step the rule reads, and the runs the cap sets
CAPS = {"max_step": ("ngd", ("ngd", "ngd-mom")), "eta_max": ("ps", ("ps",))}
METHODS = ("ngd", "ngd-mom", "ps")
LADDER = (1e2, 1e4, 1e6, 1e8, 1e10, 1e12, 1e20, 1e50, 1e100, 1e135, 1e140, 1e148, 1e150,
          1e200, 1e300, 1e308)  # fmt: skip


def _log10(values) -> np.ndarray:
    return np.asarray(values, dtype=float) / math.log(10)


def _range(values, fmt: str) -> str:
    low, high = f"{np.min(values):{fmt}}", f"{np.max(values):{fmt}}"
    return low if low == high else f"{low} to {high}"


def _when(bound: np.ndarray) -> str:
    """First logged t over seeds: "never", "t" or "a to b" (with how many seeds, if some)."""
    hit = bound[~np.isnan(bound)]
    if not hit.size:
        return "never"
    text = _range(hit, ",.0f")
    return text if hit.size == bound.size else f"{text} ({hit.size} of {bound.size} seeds)"


def largest(build: Build, experiment: str, optimizer: str) -> np.ndarray:
    """Each seed's largest log step over every step (natural logs)."""
    return build.series(experiment, optimizer, "max_log_step_W").iloc[-1].to_numpy()


def rule_table(build: Build) -> list[str]:
    """Per cap: its method's largest step, every step and logged steps alone, the rule's cap
    and the config's."""
    lines = [
        "| cap | read off | largest step, every step (log10, per seed) | largest logged step "
        "(log10) | the rule's cap | config's |",
        "|---|---|---|---|---|---|",
    ]
    for key, (method, runs) in CAPS.items():
        every = largest(build, UNCAPPED, method)
        logged = build.series(UNCAPPED, method, "log_step_W").max().to_numpy()
        configured = {cap_rule_number(build.cap(CAPPED, run)) for run in runs}
        lines.append(
            f"| `{key}` ({', '.join(runs)}) | {method} on {UNCAPPED} | "
            f"{_range(_log10(every), '.2f')} | {_range(_log10(logged), '.2f')} | "
            f"{cap_rule_number(cap_rule.rule_cap(every))} | {', '.join(sorted(configured))} |"
        )
    return lines


def cap_rule_number(cap: float) -> str:
    """A power of ten as the config writes it: 1e2, 1e148."""
    return f"1e{round(math.log10(cap))}"


def binding_table(build: Build) -> list[str]:
    """For each cap of the ladder, the first logged t by which each method's uncapped step
    has reached it, over seeds."""
    series = {m: build.series(UNCAPPED, m, "max_log_step_W") for m in METHODS}
    lines = [
        "| cap | NGD's step reaches it by t | NGD-mom's | PS's |",
        "|---|---|---|---|",
    ]
    for cap in LADDER:
        cells = [_when(cap_rule.binding(series[m], cap)) for m in METHODS]
        lines.append(f"| {cap_rule_number(cap)} | {' | '.join(cells)} |")
    return lines


def section(build: Build) -> str:
    """The generated text, its marker lines included."""
    return "\n".join([START, "", *rule_table(build), "", *binding_table(build), "", END])
