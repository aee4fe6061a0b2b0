"""config/config.yaml's registry: the numbers its comments state about fig2's caps (each
method's largest uncapped step, the rule's caps, where they bind), marked in the comments
as on a docs page (attnbias.quotes.marks), and the fact that the configured caps are the
rule's (attnbias.optim.cap_rule) on the build's uncapped runs."""

from __future__ import annotations

import math

import numpy as np

from attnbias.optim import cap_rule
from attnbias.quotes.cap_tables import CAPPED, CAPS, UNCAPPED, largest
from attnbias.quotes.quote import Page
from attnbias.quotes.sources import computed, step_reaches

CONFIG = "config/config.yaml"


def largest_step(optimizer: str):
    """log10 of each seed's largest uncapped step over every step (fig2_uncapped)."""
    return computed(
        f"{UNCAPPED} {optimizer}: log10 of the largest step over every step, per seed",
        lambda b: largest(b, UNCAPPED, optimizer) / math.log(10),
    )


def rule_cap(optimizer: str):
    return computed(
        f"the cap rule on {UNCAPPED}'s {optimizer} (attnbias.optim.cap_rule)",
        lambda b: cap_rule.rule_cap(largest(b, UNCAPPED, optimizer)),
    )


def caps_are_the_rules(b) -> bool:
    """True where every cap fig2 sets is the rule's value on its method's uncapped runs;
    else cap_rule.check_cap's ValueError, naming the config key, the rule's value and the
    largest step (the check prints it as a fault)."""
    for key, (method, runs) in CAPS.items():
        for run in runs:
            where = f"experiments.{CAPPED}.optimizers.{run}.{key}"
            steps = largest(b, UNCAPPED, method)
            cap_rule.check_cap(b.cap(CAPPED, run), steps, where, f"{UNCAPPED}'s {method}")
    return True


NUMBERS = {
    "fig2_uncapped.ngd.largest_step": largest_step("ngd"),
    "fig2_uncapped.ps.largest_step": largest_step("ps"),
    "config.fig2.ngd.rule_cap": rule_cap("ngd"),
    "config.fig2.ps.rule_cap": rule_cap("ps"),
    "fig2.ngd-mom.cap-binds": step_reaches(CAPPED, "ngd-mom"),
    "fig2.ps.cap-binds": step_reaches(CAPPED, "ps"),
}
FACTS = {
    "config.fig2.caps-are-the-rules": computed(
        "fig2's caps are the rule's values on fig2_uncapped's runs", caps_are_the_rules
    ),
    "config.fig2.ngd.cap-never-binds": computed(
        "fig2's NGD never reaches its cap",
        lambda b: bool(np.isnan(step_reaches(CAPPED, "ngd").read(b)).all()),
    ),
}

PAGE = Page(CONFIG, NUMBERS, FACTS)
