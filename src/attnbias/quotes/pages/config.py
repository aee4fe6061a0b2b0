"""config/config.yaml's registry: the numbers its comments state, marked in the comments as
on a docs page (attnbias.quotes.marks): fig2's caps (each method's largest uncapped step,
the rule's caps, where they bind) and the fact that the configured caps are the rule's
(attnbias.optim.cap_rule) on the build's uncapped runs; fig3_cond1's support vectors;
Eq. 10 at lr 0.1 against GD (the robustness target's); the claims' thresholds that the
sweep eta_cond1 restates; GD's small starts in the global-convergence study (its target's).
attnbias.quotes.config_comments holds every other number of a comment to be no
measurement: the check reports one that is not as a fault."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from attnbias.claims import joint
from attnbias.optim import cap_rule
from attnbias.quotes import config_comments
from attnbias.quotes.build import ROBUSTNESS
from attnbias.quotes.cap_tables import CAPPED, CAPS, UNCAPPED, largest
from attnbias.quotes.quote import Page
from attnbias.quotes.sources import computed, hypothesis, robust_race, step_reaches

CONFIG = config_comments.CONFIG
GLOBAL = "results/global_convergence.pdf"  # the global-convergence study's target


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


def eq10_behind_gd(b) -> bool:
    """True where Eq. 10 at lr 0.1 (the robustness target's eq10_eta) ends behind GD on
    fig3 in W, u and the loss: its lowest and its highest value over seeds at the last t
    both above GD's (every metric is lower where ahead)."""
    for metric in ("gap_W", "gap_u", "log_loss"):
        key = f"fig3 ahead of gd eq10 {metric}"
        mine, gd = (robust_race("eq10_eta", 0.1, key, who).read(b) for who in ("Eq. 10", "GD"))
        if not (mine > gd).all():
            return False
    return True


def small_starts_reached_by(b) -> float:
    """The latest first logged crossing of the global-convergence study's GD runs on plain
    Example 1 from its smallest starts (||W0||_F = the smallest scale); NaN where one of
    them never crossed."""
    runs = pd.read_csv(b.path("global_convergence.csv"))
    runs = runs[(runs["setting"] == "example1") & (runs["optimizer"] == "gd")]
    small = runs[np.isclose(runs["scale"], runs["scale"].min(), rtol=1e-6)]
    return float(small["first_iteration"].max(skipna=False))


def constant(name: str):
    """A threshold of the claims on joint training (attnbias.claims.joint), as the code
    holds it: no build needed."""
    return computed(f"attnbias.claims.joint.{name}", lambda b: float(getattr(joint, name)))


NUMBERS = {
    "fig2_uncapped.ngd.largest_step": largest_step("ngd"),
    "fig2_uncapped.ps.largest_step": largest_step("ps"),
    "config.fig2.ngd.rule_cap": rule_cap("ngd"),
    "config.fig2.ps.rule_cap": rule_cap("ps"),
    "fig2.ngd-mom.cap-binds": step_reaches(CAPPED, "ngd-mom"),
    "fig2.ps.cap-binds": step_reaches(CAPPED, "ps"),
    "claims.joint.LOSS_RATIO_GROWTH_MAX": constant("LOSS_RATIO_GROWTH_MAX"),
    "claims.joint.THM2_EXPONENT": constant("THM2_EXPONENT"),
    "claims.joint.U_GAP_MAX": constant("U_GAP_MAX"),
    "global_convergence.example1.gd.small.reached-by": computed(
        "global_convergence: GD on Example 1 from the smallest starts, latest first crossing",
        small_starts_reached_by,
        GLOBAL,
    ),
}
FACTS = {
    "config.fig2.caps-are-the-rules": computed(
        "fig2's caps are the rule's values on fig2_uncapped's runs", caps_are_the_rules
    ),
    "config.fig2.ngd.cap-never-binds": computed(
        "fig2's NGD never reaches its cap",
        lambda b: bool(np.isnan(step_reaches(CAPPED, "ngd").read(b)).all()),
    ),
    "config.fig3_cond1.every-sample-support": computed(
        "fig3_cond1's data: every sample a u-SVM support vector on every seed",
        lambda b: bool((hypothesis("fig3_cond1", "cond1_sv_fraction").read(b) == 1).all()),
    ),
    "config.fig3.eq10.lr-0.1-behind-gd": computed(
        "claims_robustness eq10_eta at 0.1: Eq. 10 behind GD on fig3 in W, u and the loss",
        eq10_behind_gd,
        ROBUSTNESS,
    ),
}

PAGE = Page(CONFIG, NUMBERS, FACTS, unmarked=config_comments.faults)
