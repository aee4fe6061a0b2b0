"""One experiment's rows (claims.rows): a row is added as what it says (Said), what was
measured on which run (Measured) and its verdict (Verdict); the statement being measured
gives what the row leaves to it, and the experiment's labels, figure and bit-identical
twins shape its texts. The tests of kind race and threshold that several statements share
(claims.races, claims.thresholds, claims.monotone) build their rows through it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from attnbias.claims.claim import Statement
from attnbias.claims.measure import describe_passage
from attnbias.claims.monotone import no_decrease_row
from attnbias.claims.races import race_row
from attnbias.claims.rows import Measured, Rows, Run, Said, Verdict, mean_spread
from attnbias.claims.thresholds import flip_text, threshold_row
from attnbias.optim.spec import resolve

STATEMENT = Statement(
    key="made-up", result="Thm. 0", quote="it converges", where="Sec. 0", section="Sec. 3",
    layouts=("fixed_decoder",), covers=("ngd",), data="any", kind="bound",
    measure=lambda rows: None,
)  # fmt: skip
OPTIMIZERS = {"gd": {"rule": "gd", "lr": 1.0}, "ngd": {"rule": "ngd", "lr": 0.1}}
GOOD = {"ass1_holds": True, "ass1_rho": 0.1, "ass2_holds": False, "ass2_spread": 0.5,
        "ass2_opt_gap": 1.0}  # fmt: skip


def _rows(table=None, **kwargs) -> Rows:
    run = None if table is None else Run(table, OPTIMIZERS, "fixed_decoder")
    specs = resolve(OPTIMIZERS, real=False)
    rows = Rows("fig0", GOOD, {"gd": "GD", "ngd": "NGD"}, specs, run=run, **kwargs)
    rows.statement = STATEMENT
    return rows


def test_rows_show_the_experiments_labels_and_cite_its_own_figure():
    rows = Rows("mine", None, {"gd": "GD", "ngd-mom": "NGD-mom"}, figure="Fig. 9")
    assert rows.label("ngd-mom") == "NGD-mom" and rows.label("ps") == "ps"  # no label: the name
    assert rows.source("Sec. 3.3, Thm. 1 against Eq. 3", "; {}") == (
        "Sec. 3.3, Thm. 1 against Eq. 3; Fig. 9"
    )
    assert rows.source("Thm. 2 against GD", " ({})") == "Thm. 2 against GD (Fig. 9)"
    no_figure = Rows("fig9", None)  # the name is no figure: only the config key gives one
    assert no_figure.source("Thm. 1, App. C.1", ", {} (plots 3-4)") == "Thm. 1, App. C.1"


def test_a_row_takes_what_it_leaves_open_from_its_statement():
    rows = _rows()
    rows.add(
        Said("k", "it converges."),
        Measured("slope", "t in [1, 10]", [-1.0, -0.5], opt="ngd", r2=[0.99, 0.95],
                 predicted=-0.5),
        Verdict("<= -0.5", True),
    )  # fmt: skip
    (row,) = rows.rows
    assert (row.result, row.source, row.kind, row.statement) == (
        "Thm. 0",
        "Sec. 0",
        "bound",
        "made-up",
    )
    assert row.key == "fig0 k" and row.claim == "NGD: it converges."  # the label opens it
    assert (row.mean, row.low, row.high, row.r2) == (-0.75, -1.0, -0.5, 0.95)
    assert row.ratio == 1.5 and math.isnan(row.window_ratio)
    assert row.covered and row.algorithm == "NGD (uncapped)"
    # Sec. 3's hypotheses, the statement's section's: Ass. 2 is broken on this data
    assert row.hypotheses.startswith("Ass. 1 holds") and not row.in_hypotheses
    assert row.verdict == (
        "consistent with the bound (outside hypotheses: Ass. 2 broken); a consistency check, "
        "not counted: a bound whose constant was lost"
    )


def test_what_a_row_says_overrides_its_statement():
    rows = _rows()
    rows.add(
        Said(
            "k",
            "it converges.",
            result="Thm. 9",
            source="Sec. 9",
            needs=(),
            covers=(),
            scope="GD here",
        ),
        Measured("slope", "t = 10", [1.0], opt="gd", value_text="slope 1"),
        Verdict("<= 0", False, undecided=True, kind="threshold", detail="slower"),
    )
    (row,) = rows.rows
    assert (row.result, row.source, row.kind) == ("Thm. 9", "Sec. 9", "threshold")
    assert not row.covered and row.algorithm == "GD here"
    assert row.in_hypotheses and row.hypotheses == ""  # it needs none
    assert row.verdict == "comparison: undecided: slower (not made for GD here)"
    assert math.isnan(row.r2) and math.isnan(row.predicted) and row.value_text == "slope 1"


def test_a_run_that_stands_for_a_twin_is_covered_as_the_twin_is():
    rows = _rows(stands_for={"gd": [("fig0_capped", "ngd")]})
    rows.add(Said("k", "it converges."), Measured("q", "w", [0.0], opt="gd"), Verdict("r", True))
    (row,) = rows.rows
    assert row.covered and row.experiment == "fig0 (= fig0_capped: bit-identical run)"


def _curves(values: dict) -> pd.DataFrame:
    """A long table of metric `gap_W` over t = 1..100: {optimizer: f(t, seed)}, 2 seeds."""
    return pd.DataFrame(
        [(o, s, t, "gap_W", f(t, s)) for o, f in values.items() for s in (0, 1)
         for t in range(1, 101)],
        columns=["optimizer", "seed", "iteration", "metric", "value"],
    )  # fmt: skip


@pytest.mark.parametrize(
    "ngd, outcome",
    [(lambda t, s: 0.5 / t, "holds"), (lambda t, s: 2.0 / t, "does not hold")],
)
def test_a_race_is_a_row_of_kind_race_with_both_numbers(ngd, outcome):
    rows = _rows(_curves({"gd": lambda t, s: 1.0 / t, "ngd": ngd}))
    race_row(rows, "ngd", "gd", "gap_W", "the gap", Said("ahead", "ahead of GD."))
    (row,) = rows.rows
    assert row.kind == "race" and row.outcome == outcome and row.claim == "NGD: ahead of GD."
    assert row.quantity == "the gap at t = 100: NGD's and GD's; margin NGD / GD"
    # the unit and what the numbers are over the seeds, then both methods' numbers
    assert row.value_text.startswith("at t = 100, mean (min to max) over seeds: NGD ")
    assert ", GD 0.01; margin NGD / GD " in row.value_text


def test_values_over_seeds_read_mean_min_to_max():
    assert mean_spread([1.0, 2.0, 6.0]) == "3 (1 to 6)"
    assert mean_spread([2.0, 2.0]) == "2"
    assert (
        describe_passage(np.array([3.0, 5.0, np.inf]), 100) == "4 (3 to 5) (1 seed not by t = 100)"
    )


def test_a_threshold_of_ours_says_how_far_it_sits_from_flipping():
    rows = _rows()
    measured = Measured("q", "w", [0.9, 0.995], opt="ngd")
    threshold_row(rows, Said("k", "c"), measured, 1.0, above=False, ours="a guess")
    threshold_row(rows, Said("k2", "c"), measured, 0.99, above=True, ours="")
    mine, papers = rows.rows
    assert mine.holds and mine.kind == "threshold" and "(threshold ours: a guess)" in mine.reference
    assert mine.detail == (
        "our threshold 1; it flips if moved by 0.5% (to the worst seed's 0.995); within 1% of "
        "its threshold: the worst seed's 0.995 against 1"
    )
    assert not papers.holds and papers.detail == "" and "the paper's" in papers.reference
    # a paper's threshold missed by less than 1% says so (the one above, by 9%, does not)
    threshold_row(rows, Said("k3", "c"), Measured("q", "w", [0.985, 1.0]), 0.99, above=True,
                  ours="")  # fmt: skip
    near = rows.rows[-1]
    assert not near.holds and near.detail == (
        "within 1% of its threshold: the worst seed's 0.985 against 0.99"
    )
    assert flip_text(-1.0, 2.0) == "it flips at -1 (the worst seed), not at a factor of it"


def test_a_dip_fails_the_no_decrease_row():
    rows = _rows()
    rising = pd.DataFrame({0: [0.1, 0.2, 0.3], 1: [0.1, 0.2, 0.3]})
    dipping = pd.DataFrame({0: [0.1, 0.2, 0.3], 1: [0.2, 0.1, 0.3]})
    for values in (rising, dipping):
        no_decrease_row(rows, Said("k", "never falls."), values, "softmax", "t in [0, 2]", "ngd")
    held, dipped = rows.rows
    assert held.holds and held.value_text == "no decrease on any seed"
    assert not dipped.holds and np.isclose(dipped.high, 0.5)


def test_a_race_the_rival_ties_on_a_seed_says_equal_not_ahead():
    """The same run on two seeds (a capped run that was SGD there) is a tie: not ahead, so
    the race does not hold, but its detail says equal, not that the rival was ahead; the
    note reaches the measured value."""
    same = lambda t, s: 1.0 / t  # noqa: E731
    rows = _rows(_curves({"gd": same, "ngd": lambda t, s: same(t, s) * (0.5 if s else 1.0)}))
    race_row(rows, "ngd", "gd", "gap_W", "the gap", Said("ahead", "ahead."), note="a note")
    (row,) = rows.rows
    assert row.outcome == "does not hold"
    assert row.detail == (
        "NGD not ahead at t = 100 on 1 of 2 seeds (GD ahead on 0, equal to it on 1)"
    )
    assert row.value_text.endswith("; equal at t = 100 on 1 of 2 seeds; a note")


def test_a_race_won_by_less_than_one_percent_says_so():
    rows = _rows(_curves({"gd": lambda t, s: 1.0 / t, "ngd": lambda t, s: 0.995 / t}))
    race_row(rows, "ngd", "gd", "gap_W", "the gap", Said("ahead", "ahead."))
    assert rows.rows[0].outcome == "holds"
    assert rows.rows[0].detail.endswith(
        "; within 1% of a tie at t = 100 on 2 of 2 seeds (margin NGD / GD 0.995)"
    )
    # the control: won by 10%, nothing of the kind
    rows = _rows(_curves({"gd": lambda t, s: 1.0 / t, "ngd": lambda t, s: 0.9 / t}))
    race_row(rows, "ngd", "gd", "gap_W", "the gap", Said("ahead", "ahead."))
    assert rows.rows[0].outcome == "holds" and "tie" not in rows.rows[0].detail


def test_a_ratio_within_one_percent_of_its_tolerance_band_says_so():
    from attnbias.claims.thresholds import band_near_text

    assert band_near_text([1.0, 1.248], 0.25) == (
        "within 1% of its threshold: the worst seed's 1.248 against 1.25"
    )
    assert band_near_text([0.755, 1.1], 0.25).endswith("0.755 against 0.75")  # the low edge
    assert band_near_text([1.0, 1.2], 0.25) == ""  # the control: 4% inside the band
