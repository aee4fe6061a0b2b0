"""Global convergence rows (attnbias.claims.global_convergence): from a bad direction
(App. C.1, Thm. 6), the loss minimized, and the study's rows, each with its control.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from claims_tables import (
    OPTS,
    bad_init_2d,
    fixed_table,
    gd_like,
    long_table,
    measured,
    ngd_like,
    row,
    rows_of,
)

from attnbias.claims import global_convergence


def test_thm6_holds_while_gd_still_converges_and_a_plateau_is_undecided():
    fast = gd_like() | {"gap_W": lambda t, s: 0.3 / math.log(max(t, 2.0)) ** 2}
    (ok,) = measured("thm6", fixed_table(gd=fast, ngd=ngd_like()), OPTS)
    # it cannot read "does not hold" (below): a consistency check outside the counts
    assert ok.holds and ok.category == "consistency" and ok.mean == pytest.approx(-2, abs=0.01)
    # levelling off at a positive floor (a wrong direction, or too slow to tell)
    plateau = gd_like() | {"gap_W": lambda t, s: 0.01 + 1 / max(t, 1.0)}
    (flat,) = measured("thm6", fixed_table(gd=plateau, ngd=ngd_like()), OPTS)
    assert not flat.holds and flat.outcome == "undecided"
    assert "slower than 1/ln t over the last decade" in flat.verdict
    # moving away from W_mm: still never "does not hold" (asymptotic, no rate)
    rising = gd_like() | {"gap_W": lambda t, s: 0.01 * max(t, 1.0) ** 0.1}
    (up,) = measured("thm6", fixed_table(gd=rising, ngd=ngd_like()), OPTS)
    assert up.outcome == "undecided"


def _with_excess(table: pd.DataFrame, excess) -> pd.DataFrame:
    """`table` with ln(L - L*) = excess(t) logged for gd and ngd on both seeds."""
    rows = [
        ("x", opt, seed, t, "log_excess_loss", excess(float(t)))
        for opt in ("gd", "ngd")
        for seed in (0, 1)
        for t in sorted(set(table["iteration"]))
    ]
    return pd.concat([table, pd.DataFrame(rows, columns=table.columns)], ignore_index=True)


def test_minimizes_the_train_loss_and_two_controls():
    dip = lambda t: 0.999 * (1 - math.exp(-t / 300)) + 0.4 * math.exp(-t / 30)  # noqa: E731
    base = bad_init_2d(dip)
    opts = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd"}}

    def rows(excess):
        table = _with_excess(base, excess)
        return measured("global-2d-loss", table, opts, "bad_init_2d", T_tokens=2)

    falling = rows(lambda t: -1 - math.log(1 + t))  # L - L* ~ 1/t: 1e-4 of its start
    gd = [r for r in falling if r.claim.startswith("gd")][0]
    assert gd.holds and gd.category == "covered" and gd.mean == pytest.approx(-4, abs=0.01)
    assert all(r.category == "comparison" for r in falling if r.claim.startswith("ngd"))
    # levelling off well above 0: L - L* ends at 0.6 of its start
    level = rows(lambda t: -1 - 0.5 * (1 - 1 / (1 + t)))
    assert not [r for r in level if r.claim.startswith("gd")][0].holds
    # far down, but rising on the way
    bump = rows(lambda t: -1 - math.log(1 + t) + 3 * (10 < t < 100))
    r = [r for r in bump if r.claim.startswith("gd")][0]
    assert not r.holds and "rises somewhere" in r.verdict
    assert np.isfinite(r.mean)


def test_bad_init_row_and_control():
    good = long_table(
        {
            ("gd", "opt_softmax"): lambda t, s: 0.2 + 0.8 * (1 - 1 / (1 + t)),
            ("gd", "gap_W"): lambda t, s: 1.0 / (1 + t),
        }
    )
    assert row(rows_of(good, {"gd": {"rule": "gd"}}, kind="bad_init"), "gd global").holds
    starts_high = long_table(
        {
            ("gd", "opt_softmax"): lambda t, s: 0.5 + 0.5 * (1 - 1 / (1 + t)),
            ("gd", "gap_W"): lambda t, s: 1.0 / (1 + t),
        }
    )
    assert not row(rows_of(starts_high, {"gd": {"rule": "gd"}}, kind="bad_init"), "gd global").holds


def test_bad_init_2d_claims_see_the_dip_and_the_convergence():
    # falls from 0.4 (t = 0) to about 0.24 near t = 30, then rises to 0.999
    dip = lambda t: 0.999 * (1 - math.exp(-t / 300)) + 0.4 * math.exp(-t / 30)  # noqa: E731
    rows = rows_of(
        bad_init_2d(dip),
        {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd"}},
        kind="bad_init_2d",
        T_tokens=2,
    )
    rows = [r for r in rows if r.statement == "global-2d"]  # Thm. 6 reads the run too
    assert len(rows) == 4 and all(r.holds for r in rows), [r.quantity for r in rows]
    assert 0.2 < row(rows, "gd sample 1 dips").mean < 0.3
    # a softmax that only rises has no dip: the first claim fails, the convergence one holds
    rise = lambda t: 0.999 - 0.6 / (t + 1)  # noqa: E731
    rows = rows_of(bad_init_2d(rise), {"gd": {"rule": "gd"}}, kind="bad_init_2d", T_tokens=2)
    assert [r.holds for r in rows if r.statement == "global-2d"] == [False, True]


def _study_verdicts(outcomes_plain, outcomes_spread=("reached",) * 3):
    """The study rows' verdicts for one optimizer's starts (scales 1, 1, 100) on a setting
    within the hypotheses (plain) and one outside them (spread)."""
    outcomes = list(outcomes_plain) + list(outcomes_spread)
    runs = pd.DataFrame(
        {
            "setting": ["plain"] * 3 + ["spread"] * 3,
            "optimizer": ["ngd"] * 6,
            "scale": [1, 1, 100] * 2,
            "reached": [o == "reached" for o in outcomes],
            "outcome": outcomes,
            # a missed start ends at 0.0101, one that left float64 at NaN
            "final_gap": [
                {"reached": 1e-3, "left_float64": np.nan}.get(o, 0.0101) for o in outcomes
            ],
        }
    )
    good = {"setting": "plain", "ass1_rho": 0.2, "ass1_holds": True, "ass2_spread": 0.0,
            "ass2_opt_gap": 1.0, "ass2_holds": True}  # fmt: skip
    broken = dict(good, setting="spread", ass2_spread=0.5, ass2_holds=False)
    table = global_convergence.study_claims(
        runs, pd.DataFrame([good, broken]), {"threshold": 0.01, "iterations": 3000}, specs={}
    )
    return table, dict(zip(table["experiment"], table["verdict"], strict=True))


# where the finite starts that missed ended, next to the threshold 0.01
ENDS = " (1 - cos(W_t, W_mm) ends at 0.0101 to 0.0101, 1.01 to 1.01 times the threshold)"


def test_study_row_holds_where_every_small_start_reaches():
    table, verdicts = _study_verdicts(["reached", "reached", "failed"])
    assert verdicts["plain"] == "holds"  # the scale-100 failure is not asked
    assert verdicts["spread"] == "holds (outside hypotheses: Ass. 2 broken)"
    assert table.loc[0, "mean"] == 1.0
    assert "over every scale: 2 reached, 0 still falling at" in table.loc[0, "quantity"]
    assert "1 failed" in table.loc[0, "quantity"]


@pytest.mark.parametrize(
    "small, verdict",
    [
        (["reached", "failed"], f"does not hold: 1 failed{ENDS}"),
        (["undecided", "reached"], "undecided: at this horizon: 1 still falling at least "
         f"like 1/ln t{ENDS}"),
        (["left_float64", "reached"], "undecided: at this horizon: 1 left float64's range"),
        (["slower", "reached"], "undecided: at this horizon: 1 still falling, more slowly "
         f"than 1/ln t{ENDS}"),
        (["failed", "left_float64"], f"does not hold: 1 failed{ENDS}"),  # a failure decides
        (["undecided", "left_float64"], "undecided: at this horizon: 1 still falling at least "
         f"like 1/ln t, 1 left float64's range{ENDS}"),
    ],
)  # fmt: skip
def test_study_row_reads_only_a_failure_as_does_not_hold(small, verdict):
    table, verdicts = _study_verdicts([*small, "reached"])
    assert verdicts["plain"] == verdict
    assert table.loc[0, "outcome"] == verdict.split(":")[0]
    # the control: the same starts all reached
    assert _study_verdicts(["reached"] * 3)[1]["plain"] == "holds"


def test_study_row_refuses_an_unknown_outcome():
    with pytest.raises(ValueError, match="unknown outcomes \\['diverged'\\]"):
        _study_verdicts(["reached", "diverged", "reached"])
