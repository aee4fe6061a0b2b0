"""The rule that chooses fig2's two step caps (App. C: one for NGD and NGD-mom, `max_step`,
one for PS, `eta_max`; the paper's values were lost), from the runs, reading no verdict.

The rule, for each cap: the smallest power of ten that its method's uncapped step (NGD's
lr / ||grad L|| for `max_step`, PS's (L - L*) / ||grad L||^2 for `eta_max`) never reaches
at ANY step of the horizon on any seed (the trainers' `max_log_step_W` at the last
iteration: every step, not only the logged ones), so that the capped run is the algorithm
the theorems analyse (Thm. 1: NGD, Thm. 7: PS) for as long as float64 can hold its step.
Where that power of ten exceeds float64's largest number (PS's step reaches 10^4344 by
t = 10^4 in our logarithmic arithmetic, NGD's 10^444 by 3 10^4), no float64 cap is never
reached: the cap is then the largest power of ten float64 holds, 1e308, which binds exactly
where a step computed in plain float64 (as the paper's implementation would) overflows to
infinity: App. C's cap as float64 must have it. The rule reads only step sizes (no
1 - cos, no loss, no race), so no verdict can steer it.

`rule_exponent` gives the rule's power of ten, `rule_cap` the cap as a float, `check_cap`
refuses a configured cap that is not the rule's (naming the config key; the quotes check
asks it of the build's config, attnbias.quotes.pages.config), `binding` says at which
logged iteration a cap first binds a run, from its running largest step.
"""

from __future__ import annotations

import math
import sys

import numpy as np

# the largest power of ten float64 holds (float max 1.8e308): the rule's ceiling
FLOAT64_EXPONENT = int(math.floor(math.log10(sys.float_info.max)))


def rule_exponent(largest_log_steps) -> int:
    """k of the smallest 10^k strictly above every seed's largest step (natural logs of
    the step sizes, one per seed: `max_log_step_W` at the last iteration of the uncapped
    runs), never above FLOAT64_EXPONENT. Refuses runs without a finite largest step."""
    steps = np.asarray(largest_log_steps, dtype=float)
    if steps.size == 0 or not np.isfinite(steps).all():
        raise ValueError(
            "the cap rule needs every seed's largest step (max_log_step_W at the last "
            f"iteration of the uncapped runs) finite, got {steps.tolist()}"
        )
    largest = float(steps.max()) / math.log(10)  # log10 of the largest step
    return min(math.floor(largest) + 1, FLOAT64_EXPONENT)


def rule_cap(largest_log_steps) -> float:
    """The rule's cap, 10^k (rule_exponent)."""
    return float(10.0 ** rule_exponent(largest_log_steps))


def reached(largest_log_steps) -> bool:
    """Whether the uncapped step reached float64's ceiling 10^FLOAT64_EXPONENT on some seed:
    then the rule's cap binds (where a plain float64 step would overflow)."""
    return float(np.max(largest_log_steps)) / math.log(10) >= FLOAT64_EXPONENT


def check_cap(configured, largest_log_steps, key: str, runs: str) -> None:
    """Refuse a configured cap (`key`: its config path) that is not the rule's value on the
    uncapped runs (`runs`: named in the message)."""
    expected = rule_cap(largest_log_steps)
    if configured is None or float(configured) != expected:
        largest = float(np.max(largest_log_steps)) / math.log(10)
        raise ValueError(
            f"{key} is {configured}, the cap rule (attnbias.optim.cap_rule) gives "
            f"{expected:.0e}: the largest step of {runs} over every step is 10^{largest:.2f}"
        )


def binding(max_log_step, cap: float) -> np.ndarray:
    """Per seed, the first logged iteration at which a run's running largest step
    (`max_log_step`: iteration x seed, natural logs, max_log_step_W) has reached `cap`: the
    cap bound at a step before it and after the previous logged one (NaN: never bound)."""
    hit = max_log_step.to_numpy() >= math.log(cap) - 1e-9
    index = max_log_step.index.to_numpy(dtype=float)
    return np.array([index[hit[:, s]].min() if hit[:, s].any() else math.nan
                     for s in range(hit.shape[1])])  # fmt: skip
