"""The remarks' registry entries, on hand-made aggregate tables: Fig. 2's PS against NGD
in every metric, its loss floor and PS slowing down; Fig. 9's direction, its race and its
data's scores; Lem. 10's log norm; Fig. 3's races in every metric. Each row holds on one
fixture and fails (or reads undecided) on its control."""

from __future__ import annotations

import math

import pytest
from claims_tables import (
    EQ10,
    GOOD,
    JOINT_GOOD,
    fixed_table,
    gd_like,
    joint_curves,
    long_table,
    ngd_like,
    row,
    rows_of,
)

OPTS = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1}}
FIG2 = OPTS | {"ps": {"rule": "polyak", "eta_max": 1e10}}  # Fig. 2's PS: capped


def with_loss(curves: dict, log_excess, floor: float = 0.37) -> dict:
    """A fixed decoder's curves with its loss L* + exp(log_excess(t)) and ln(L - L*)."""
    return curves | {
        "log_excess_loss": lambda t, s: log_excess(t),
        "loss": lambda t, s: floor + math.exp(log_excess(t)),
    }


def fast(exponent=-2.0):
    """NGD-like curves, with the loss's excess falling like exp(-t / 10)."""
    return with_loss(ngd_like(exponent), lambda t: -t / 10)


def slow():
    """GD-like curves: every gap falling like a power of 1/ln t."""
    return with_loss(gd_like(), lambda t: -math.log(max(t, 1.0)) - 1)


# ---- Fig. 2: PS faster than NGD in every metric ------------------------------------


def test_ps_ahead_of_ngd_in_every_metric_fig_2_draws_and_its_control():
    rows = rows_of(fixed_table(gd=slow(), ngd=fast(-0.9), ps=fast(-2.0) | {
        "W_norm": lambda t, s: 0.2 * t,  # larger is ahead
        "log_excess_loss": lambda t, s: -t / 5,
        "log1m_opt_softmax": lambda t, s: -t / 5,
    }), FIG2, figure="Fig. 2")  # fmt: skip
    # W's direction: the race of "PS outperforms NGD", counted once
    assert row(rows, "ps ahead of ngd").statement == "fig2-ps-first"
    assert not [r for r in rows if r.key == "x ps ahead of ngd gap_W"]
    metrics = ("log_excess_loss", "log1m_opt_softmax", "W_norm")
    for metric in metrics:
        r = row(rows, f"ps ahead of ngd {metric}")
        assert r.outcome == "holds" and r.category == "covered", metric
        assert r.statement == "fig2-ps-all-metrics"
    assert "||W_t|| is above ngd's" in row(rows, "ps ahead of ngd W_norm").claim
    assert "holds if above ngd's" in row(rows, "ps ahead of ngd W_norm").reference
    # the control: PS with NGD's curves but a norm half NGD's and a loss ahead of it
    behind = fast(-0.9) | {"W_norm": lambda t, s: 0.05 * t, "log_excess_loss": lambda t, s: -t}
    rows = rows_of(fixed_table(gd=slow(), ngd=fast(-0.9), ps=behind), FIG2, figure="Fig. 2")
    outcomes = {m: row(rows, f"ps ahead of ngd {m}").outcome for m in metrics}
    assert outcomes == {"log_excess_loss": "holds", "log1m_opt_softmax": "does not hold",
                        "W_norm": "does not hold"}  # fmt: skip
    assert row(rows, "ps ahead of ngd").outcome == "does not hold"
    assert "ngd ahead at t = 10000 on 2 of 2 seeds" in row(rows, "ps ahead of ngd W_norm").verdict
    # uncapped PS: a comparison
    uncapped = rows_of(fixed_table(gd=slow(), ngd=fast(-0.9), ps=behind),
                       OPTS | {"ps": {"rule": "polyak"}}, figure="Fig. 2")  # fmt: skip
    assert row(uncapped, "ps ahead of ngd W_norm").category == "comparison"


# ---- Sec. 3.2: the loss does not converge to 0 --------------------------------------


def test_a_loss_levelling_off_at_a_positive_floor_holds_and_its_controls():
    rows = rows_of(fixed_table(gd=slow(), ngd=fast()), OPTS)
    for opt in ("gd", "ngd"):
        r = row(rows, f"{opt} loss floor")
        assert r.outcome == "holds" and r.category == "covered" and r.in_hypotheses, opt
    # GD: (L - L*) / L* = exp(-ln 10^4 - 1) / 0.37 at the end
    expected = (-math.log(1e4) - 1 - math.log(0.37)) / math.log(10)
    assert row(rows, "gd loss floor").mean == pytest.approx(expected)
    assert "L* 0.37" in row(rows, "gd loss floor").value_text
    # controls: a loss still 10% above its floor, and one falling to 0 (no positive floor)
    above = with_loss(gd_like(), lambda t: math.log(0.037))
    to_zero = with_loss(gd_like(), lambda t: -t / 1000, floor=0.0)
    rows = rows_of(fixed_table(gd=above, ngd=to_zero), OPTS)
    r = row(rows, "gd loss floor")
    assert r.outcome == "does not hold" and "it flips if moved by a factor 10" in r.verdict
    r = row(rows, "ngd loss floor")
    assert r.outcome == "does not hold" and r.verdict.endswith("no positive floor on some seed")


# ---- Fig. 2: PS much faster in the beginning, slower later --------------------------


def slowing(t, s):
    """t^-1.2 up to t = 20, then t^-0.05 (as the cap binds)."""
    return t**-1.2 if t <= 20 else 20**-1.2 * (t / 20) ** -0.05


def test_ps_slowing_down_holds_where_its_rate_falls_and_fails_where_it_keeps_it():
    rows = rows_of(fixed_table(gd=slow(), ngd=fast(), ps=fast() | {"gap_W": slowing}), FIG2,
                   figure="Fig. 2")  # fmt: skip
    r = row(rows, "ps slows down")
    assert r.outcome == "holds" and r.category == "covered"
    assert r.mean == pytest.approx(0.05 / 1.2) and r.r2 == pytest.approx(1.0)
    steady = fast() | {"gap_W": lambda t, s: t**-1.2}  # the same rate throughout
    rows = rows_of(fixed_table(gd=slow(), ngd=fast(), ps=steady), FIG2, figure="Fig. 2")
    r = row(rows, "ps slows down")
    assert r.outcome == "does not hold" and r.mean == pytest.approx(1.0)
    assert "our threshold 0.5; it flips if moved by a factor 2" in r.verdict


# ---- Fig. 9: direction, race, scores ------------------------------------------------

FIG9_SUMMARY = dict(GOOD, signal_opt_fraction=1.0)


def test_fig9_direction_converges_and_a_gap_levelling_off_does_not():
    log_sq = slow() | {"gap_W": lambda t, s: 0.3 / math.log(max(t, 2.0)) ** 2}
    rows = rows_of(fixed_table(gd=log_sq, ngd=fast(-0.9)), OPTS, summary=FIG9_SUMMARY,
                   figure="Fig. 9")  # fmt: skip
    for opt in ("gd", "ngd"):
        r = row(rows, f"{opt} direction converges")
        assert r.outcome == "holds" and r.category == "covered", opt
    # 1/ln^2 t falls at twice 1/ln t's slope (our threshold) over the same window
    gd = row(rows, "gd direction converges")
    assert "it flips if moved by a factor 2 " in gd.verdict
    # the control: a gap levelling off at 0.05 (a wrong direction)
    floor = fast(-0.9) | {"gap_W": lambda t, s: 0.05 + 1 / t}
    rows = rows_of(fixed_table(gd=log_sq, ngd=floor), OPTS, summary=FIG9_SUMMARY,
                   figure="Fig. 9")  # fmt: skip
    assert row(rows, "ngd direction converges").outcome == "does not hold"
    assert "x gd direction converges" not in {
        r.key for r in rows_of(fixed_table(gd=log_sq, ngd=floor), OPTS, figure="Fig. 2")
    }  # Fig. 9's remark, on Fig. 9's runs only


def test_fig9_ngd_ahead_of_gd_in_every_converging_metric_and_its_control():
    rows = rows_of(fixed_table(gd=slow(), ngd=fast(-0.9)), OPTS, summary=FIG9_SUMMARY,
                   figure="Fig. 9")  # fmt: skip
    metrics = ("gap_W", "log_excess_loss", "log1m_opt_softmax")
    for metric in metrics:
        r = row(rows, f"ngd ahead of gd {metric}")
        assert r.outcome == "holds" and r.category == "covered" and r.kind == "race", metric
    rows = rows_of(fixed_table(gd=fast(-0.9), ngd=slow()), OPTS, summary=FIG9_SUMMARY,
                   figure="Fig. 9")  # fmt: skip
    assert {row(rows, f"ngd ahead of gd {m}").outcome for m in metrics} == {"does not hold"}


def test_fig9_scores_read_the_datas_hypotheses():
    rows = rows_of(fixed_table(gd=slow(), ngd=fast()), OPTS, summary=FIG9_SUMMARY,
                   figure="Fig. 9")  # fmt: skip
    assert row(rows, "signal scores highest").outcome == "holds"
    assert row(rows, "scores ass2").outcome == "holds"
    assert row(rows, "scores ass2").category == "covered"  # a property of the data
    broken = dict(FIG9_SUMMARY, ass2_spread=0.33, ass2_opt_gap=0.046, ass2_holds=False,
                  signal_opt_fraction=0.9)  # fmt: skip
    rows = rows_of(fixed_table(gd=slow(), ngd=fast()), OPTS, summary=broken, figure="Fig. 9")
    r = row(rows, "scores ass2")
    assert r.verdict.startswith(
        "does not hold: non-opt score spread 0.33 against an opt gap of 0.046; the spread is "
        "the noise patches'"
    )
    assert row(rows, "signal scores highest").outcome == "does not hold"
    assert "90% of the samples" in row(rows, "signal scores highest").value_text
    # data without a signal patch: no such row, the Ass. 2 row still
    rows = rows_of(fixed_table(gd=slow(), ngd=fast()), OPTS, figure="Fig. 9")
    assert {r.key for r in rows} >= {"x scores ass2"} and "x signal scores highest" not in {
        r.key for r in rows
    }


# ---- Lem. 10 and Fig. 3 --------------------------------------------------------------


@pytest.mark.parametrize("norm, outcome", [
    (lambda t, s: 0.5 + math.log(max(t, 1.0)), "holds"),
    (lambda t, s: 0.3 * max(t, 1.0) ** 0.3, "does not hold"),  # a power law: the control
])  # fmt: skip
def test_lemma_10_log_norm_under_eq10_and_a_power_law_control(norm, outcome):
    table = long_table({("eq10", m): f for m, f in (joint_curves() | {"W_norm": norm}).items()})
    rows = rows_of(table, {"eq10": EQ10}, summary=JOINT_GOOD, kind="joint")
    r = row(rows, "eq10 norm log growth")
    assert r.outcome == outcome and r.category == "covered" and r.statement == "lem10"
    if outcome == "holds":
        assert "b = 1 per unit of ln t (lr = 1)" in r.value_text


def test_fig3_races_read_u_and_the_softmax_and_ps_fastest_every_metric():
    full = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "normalize": "per_block"},
            "ps": {"rule": "polyak", "f_star": 0}, "joint-ngd": {"rule": "ngd"}}  # fmt: skip
    base = joint_curves() | {"log1m_opt_softmax": lambda t, s: -0.1 * t}
    gd = base | {
        "gap_W": lambda t, s: 2.0 / t,
        "gap_u": lambda t, s: 1e-3,
        "log_loss": lambda t, s: -0.01 * t,
        "log1m_opt_softmax": lambda t, s: -0.01 * t,
    }
    # PS: behind both NGDs in W (as on our fig3), ahead in u, the loss and the softmax
    ps = base | {"gap_W": lambda t, s: 1.5 / t, "gap_u": lambda t, s: 1e-7,
                 "log_loss": lambda t, s: -t, "log1m_opt_softmax": lambda t, s: -t}  # fmt: skip
    curves = {("gd", m): f for m, f in gd.items()} | {("ps", m): f for m, f in ps.items()}
    curves |= {(o, m): f for o in ("ngd", "joint-ngd") for m, f in base.items()}
    table = long_table(curves)
    rows = rows_of(table, full, summary=JOINT_GOOD, kind="joint", figure="Fig. 3")
    for opt in ("ngd", "ps", "joint-ngd"):
        for metric in ("gap_W", "gap_u", "log_loss", "log1m_opt_softmax"):
            assert row(rows, f"ahead of gd {opt} {metric}").outcome == "holds", (opt, metric)
    for rival in ("ngd", "joint-ngd"):
        assert row(rows, f"ps ahead of {rival}").outcome == "does not hold"  # W, as before
        for metric in ("gap_u", "log_loss", "log1m_opt_softmax"):
            r = row(rows, f"ps ahead of {rival} {metric}")
            assert r.outcome == "holds" and r.statement == "fig3-ps-fastest", (rival, metric)
    # the control: GD's curves under PS's name fall behind GD nowhere and NGD everywhere
    curves |= {("ps", m): f for m, f in gd.items()}
    rows = rows_of(long_table(curves), full, summary=JOINT_GOOD, kind="joint", figure="Fig. 3")
    for metric in ("gap_u", "log_loss", "log1m_opt_softmax"):
        assert row(rows, f"ps ahead of ngd {metric}").outcome == "does not hold", metric
        assert row(rows, f"ahead of gd ps {metric}").outcome == "does not hold", metric
