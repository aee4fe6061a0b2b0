"""Joint-training rows (attnbias.claims.joint): Thm. 2, 3, 4 and their controls."""

from __future__ import annotations

import math

import pytest
from claims_tables import EQ10, GOOD, JOINT_GOOD, joint_curves, long_table, measured, row, rows_of


def test_thm4_rate_is_consistent_with_a_fast_u_and_undecided_for_a_slow_one():
    fast = joint_curves() | {"gap_u": lambda t, s: 1.0 / max(t, 1.0)}
    table = long_table({("eq10", m): f for m, f in fast.items()})
    (ok,) = measured("thm4-rate", table, {"eq10": EQ10}, "joint", JOINT_GOOD)
    # a bound whose constant was lost cannot fail: a consistency check outside the counts
    assert ok.verdict.startswith("consistent with the bound") and ok.category == "consistency"
    assert "against ln t: -1" in ok.value_text
    slow = joint_curves() | {"gap_u": lambda t, s: 0.3 / math.log(max(t, 2.0)) ** 0.5}
    table = long_table({("eq10", m): f for m, f in slow.items()})
    (bad,) = measured("thm4-rate", table, {"eq10": EQ10}, "joint", JOINT_GOOD)
    assert not bad.holds and bad.verdict.startswith("undecided: slower than the bound's rate")


JOINT_KEYS = ("u direction", "u margin", "loss rate", "W rate bound", "loss ratio", "score gap",
              "softmax monotone")  # fmt: skip


@pytest.mark.parametrize("good", [True, False])
def test_joint_rows_and_their_controls(good):
    table = long_table({("eq10", m): f for m, f in joint_curves(good).items()})
    margins = {"eq10": [1.0, 0.995] if good else [0.1, 0.2]}
    rows = rows_of(table, {"eq10": EQ10}, summary=JOINT_GOOD, kind="joint",
                   u_margins={"x": margins})  # fmt: skip
    for key in JOINT_KEYS:
        r = row(rows, f"eq10 {key}")
        assert r.holds == good, (key, r.mean, r.reference)
        bound = key == "W rate bound"  # its constant lost: it cannot fail, outside the counts
        assert r.in_hypotheses and r.category == ("consistency" if bound else "covered")
        assert "Cond. 1 holds" in r.hypotheses


def test_joint_rows_on_other_algorithms_are_comparisons_and_gd_fails_the_margin():
    """Thms. 2-4 and Lem. 11 are proved for Eq. 10 with its step factors only; GD's u at
    10^4 on fig3 has 0.92 of u_mm's margin (measured), which the margin row must fail."""
    curves = {(o, m): f for o in ("gd", "ngd", "eq10") for m, f in joint_curves().items()}
    optimizers = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "normalize": "per_block"},
                  "eq10": EQ10}  # fmt: skip
    margins = {"gd": [0.92, 0.92], "ngd": [1.0, 1.0], "eq10": [1.0, 1.0]}
    rows = rows_of(long_table(curves), optimizers, summary=JOINT_GOOD, kind="joint",
                   u_margins={"x": margins})  # fmt: skip
    counted = [r for r in rows if r.key.startswith("x eq10") and r.kind != "bound"]
    assert counted and all(r.category == "covered" for r in counted)
    others = [r for r in rows if r.key.startswith(("x gd", "x ngd")) and "ahead" not in r.key
              and r.kind != "bound"]  # fmt: skip
    assert others and all(r.category == "comparison" for r in others)
    gd = row(rows, "gd u margin")
    assert not gd.holds and gd.verdict.startswith("comparison: does not hold")


def test_thm2_rate_fails_a_gd_like_loss():
    """-ln L growing like ln t (GD) is not a power law of t: the Thm. 2 row fails it."""
    gd_loss = joint_curves() | {"log_loss": lambda t, s: -math.log(t + 2.0)}
    rows = rows_of(long_table({("eq10", m): f for m, f in gd_loss.items()}), {"eq10": EQ10},
                   summary=JOINT_GOOD, kind="joint")  # fmt: skip
    assert row(rows, "eq10 loss rate").outcome == "does not hold"
    assert "our threshold 0.4; it flips if moved by a factor" in row(rows, "eq10 loss rate").verdict
    sqrt_loss = joint_curves() | {"log_loss": lambda t, s: -0.5 * math.sqrt(t + 1.0)}
    rows = rows_of(long_table({("eq10", m): f for m, f in sqrt_loss.items()}), {"eq10": EQ10},
                   summary=JOINT_GOOD, kind="joint")  # fmt: skip
    assert row(rows, "eq10 loss rate").mean == pytest.approx(0.5, abs=0.01)
    assert row(rows, "eq10 loss rate").holds


def test_joint_rows_on_fixed_decoder_data_are_outside_condition_1():
    table = long_table({("ngd", m): f for m, f in joint_curves().items()})
    rows = rows_of(table, {"ngd": {"rule": "ngd"}}, summary=GOOD, kind="joint")
    assert all(not r.in_hypotheses for r in rows)
    assert all("Cond. 1 broken" in r.verdict for r in rows)
