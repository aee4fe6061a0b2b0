"""optim.cap_rule: fig2's two caps from the uncapped runs' largest steps (every step)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from attnbias.optim import cap_rule

LN10 = math.log(10)


def ln(*log10_steps):
    """Natural logs of steps given by their log10 (max_log_step_W's units)."""
    return np.array(log10_steps) * LN10


def test_the_smallest_power_of_ten_no_seed_reaches():
    # NGD on fig2_uncapped, t <= 10^4: largest steps 10^131.1 .. 10^147.66 -> 1e148
    steps = ln(142.45, 134.27, 147.66, 131.1)
    assert cap_rule.rule_exponent(steps) == 148
    assert cap_rule.rule_cap(steps) == 1e148
    assert cap_rule.rule_cap(ln(2.0)) == 1e3  # a step of exactly 10^2 reaches 1e2: not it
    cap_rule.check_cap(1e148, steps, "experiments.fig2.optimizers.ngd.max_step", "NGD")
    # control: the old shared cap, and the cap the logged steps alone gave (10^134.5)
    for wrong in (1e150, 1e135, None):
        with pytest.raises(ValueError, match=r"ngd.max_step is .*gives 1e\+148.*10\^147.66"):
            cap_rule.check_cap(wrong, steps, "experiments.fig2.optimizers.ngd.max_step", "NGD")


def test_beyond_float64_the_cap_is_its_largest_power_of_ten():
    # PS's uncapped step reaches 10^4344 by t = 10^4 (logs: our arithmetic holds it)
    steps = ln(4344.27, 4344.34)
    assert cap_rule.reached(steps) and not cap_rule.reached(ln(147.66))
    assert cap_rule.rule_exponent(steps) == cap_rule.FLOAT64_EXPONENT == 308
    assert cap_rule.rule_cap(steps) == 1e308 and math.isfinite(cap_rule.rule_cap(steps))
    assert cap_rule.rule_cap(ln(307.5)) == 1e308 and cap_rule.rule_cap(ln(306.9)) == 1e307
    with pytest.raises(ValueError, match="eta_max is 1e\\+150"):
        cap_rule.check_cap(1e150, steps, "experiments.fig2.optimizers.ps.eta_max", "PS")


def test_the_rule_refuses_runs_without_a_largest_step():
    for bad in ([], [math.nan, 3.0], [math.inf]):
        with pytest.raises(ValueError, match="max_log_step_W"):
            cap_rule.rule_exponent(bad)


def test_where_a_cap_binds_from_the_running_largest_step():
    running = pd.DataFrame(
        {0: ln(math.nan, 1.0, 5.0, 5.0), 1: ln(math.nan, 2.0, 3.0, 4.0)}, index=[0, 10, 100, 1000]
    )
    np.testing.assert_array_equal(cap_rule.binding(running, 1e5), [100, math.nan])
    np.testing.assert_array_equal(cap_rule.binding(running, 1e2), [100, 10])
