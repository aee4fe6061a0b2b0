"""claims.caps: what a row on fig2's capped runs says of App. C's caps, read off the runs'
largest step over every step (max_log_step_W): each cap, where it bound, the caps a run
that never bound stands for, that the paper's values were lost, and, for PS slowing down,
that the effect is the cap's binding. Each on a hand-made table with its control."""

from __future__ import annotations

import math

from claims_tables import OPTS, fixed_table, gd_like, ngd_like, row, rows_of

LN10 = math.log(10)
CAPS = OPTS | {"ps": {"rule": "polyak", "eta_max": 1e10}}
CAPS["ngd"] = {"rule": "ngd", "lr": 0.1, "max_step": 1e148}


def steps(log10_per_step: float, cap_log10: float):
    """A running largest step growing like 10^(rate t), held at the cap once reached."""
    return lambda t, s: math.nan if t == 0 else min(log10_per_step * t, cap_log10) * LN10


def slowing(t, s):
    """t^-1.2 up to t = 20, then t^-0.05 (as a cap binds)."""
    return t**-1.2 if t <= 20 else 20**-1.2 * (t / 20) ** -0.05


def table(ps_steps):
    ngd = ngd_like(-0.9) | {"max_log_step_W": steps(0.014766, 200.0)}  # 10^147.66 at 10^4
    ps = ngd_like(-2.0) | {"gap_W": slowing, "max_log_step_W": ps_steps}
    return fixed_table(gd=gd_like(), ngd=ngd, ps=ps)


def test_a_race_names_both_caps_where_they_bound_and_that_the_values_were_lost():
    # PS's cap binds at t = 20 (logged: 21)
    rows = rows_of(table(steps(0.5, 10.0)), CAPS, figure="Fig. 2")
    text = row(rows, "ps ahead of ngd").value_text
    assert "caps: ps's eta_max 1e10 bound by t = " in text
    assert "ngd's max_step 1e148 never bound (largest step 10^147.66 to 10^147.66" in text
    assert "every max_step above 10^147.66 gives this run" in text
    assert "App. C's cap values were lost" in text
    first = row(rows, "ps fastest").value_text
    assert "ps's eta_max 1e10 bound" in first and "ngd's max_step 1e148" in first
    # control: uncapped runs name no cap
    uncapped = {"gd": OPTS["gd"], "ngd": {"rule": "ngd", "lr": 0.1}, "ps": {"rule": "polyak"}}
    rows = rows_of(table(steps(0.5, 10.0)), uncapped, figure="Fig. 2")
    assert "caps:" not in row(rows, "ps ahead of ngd").value_text


def test_ps_slowing_down_says_its_effect_is_the_caps_binding():
    rows = rows_of(table(steps(0.5, 10.0)), CAPS, figure="Fig. 2")
    r = row(rows, "ps slows down")
    assert r.outcome == "holds"
    assert "the effect is the cap's: ps's eta_max 1e10 bound by t = 21 before the late" in r.verdict
    # control: a cap PS never reaches makes no such claim (and the note says it never bound)
    rows = rows_of(table(steps(1e-4, 1.0)), CAPS, figure="Fig. 2")
    r = row(rows, "ps slows down")
    assert "the effect is the cap's" not in r.verdict
    assert "ps's eta_max 1e10 never bound" in r.value_text
