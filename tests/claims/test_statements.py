"""The registry of the paper's statements (attnbias.claims.statements): every entry yields
rows or a "not measured" line; rows follow what an optimizer is, not its config name; the
real-data statements read run tables of the real schema, with a control for each.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml
from claims_tables import (
    EQ10,
    GOOD,
    JOINT_GOOD,
    OPTS,
    REAL_OPTS,
    bad_init_2d,
    decay,
    fixed_table,
    gd_like,
    joint_curves,
    long_table,
    ngd_like,
    real_table,
    similarity_frame,
)
from project import REPO

from attnbias.claims import layouts, write
from attnbias.claims.beyond import BEYOND
from attnbias.claims.statements import STATEMENTS


def test_every_registry_entry_yields_rows_or_a_not_measured_line():
    """With no run at all, each entry is one "not measured" line naming what is missing;
    with runs of a layout, its entries are measured (none of them also 'not measured')."""
    empty = layouts.claims({}, {})
    assert sorted(empty["statement"]) == sorted(s.key for s in STATEMENTS + BEYOND)
    assert (empty["kind"] == "not measured").all()
    assert all(v.startswith("not measured: ") and len(v) > 20 for v in empty["verdict"])
    assert "0 rows measure 0 of the" in write.summary_line(empty)
    opts = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1}}
    experiment = {
        "layout": "fixed_decoder",
        "optimizers": opts,
        "seeds": 2,
        "paper_figure": "Fig. 2",
    }
    table = layouts.claims({"x": experiment}, {"x": fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))},
                          {"x": [2.0, 2.0]}, {"x": 3}, {"x": GOOD})  # fmt: skip
    assert set(table["statement"]) == {s.key for s in STATEMENTS + BEYOND}
    for key, rows in table.groupby("statement"):
        kinds = set(rows["kind"])
        assert kinds == {"not measured"} and len(rows) == 1 or "not measured" not in kinds, key
    measured = set(table.loc[table["kind"] != "not measured", "statement"])
    assert {"thm1-rate", "thm1-close", "lem3", "fig2-ngd-vs-gd"} <= measured


def test_each_entry_states_its_words_place_algorithms_data_and_test():
    kinds = {"bound", "remark", "race", "threshold", "measurement", "consistency"}
    assert len({s.key for s in STATEMENTS}) == len(STATEMENTS)
    for s in STATEMENTS:
        assert s.quote and s.where and s.data and s.missing, s.key
        assert s.kind in kinds, s.key


def _rename(table: pd.DataFrame, old: str, new: str) -> pd.DataFrame:
    return table.assign(optimizer=table["optimizer"].replace(old, new))


def _tiny_experiments() -> dict:
    """config/tiny.yaml's experiments as the claims read them (settings with their rule)."""
    config = yaml.safe_load((REPO / "config/tiny.yaml").read_text())["experiments"]
    return {
        name: {
            "layout": e["layout"],
            "seeds": 2,
            "optimizers": {o: {k: v for k, v in s.items() if k != "label"}
                           for o, s in e["optimizers"].items()},
            "labels": {o: s.get("label", o) for o, s in e["optimizers"].items()},
            "paper_figure": e.get("paper_figure"),
        }
        for name, e in config.items()
        if e["layout"] in ("fixed_decoder", "joint", "two_token")
    }  # fmt: skip


def _tables(experiments: dict) -> dict:
    """Synthetic curves for every optimizer of each experiment (NGD-like for the adaptive
    ones, GD-like for GD, joint curves in joint training)."""
    out = {}
    for name, e in experiments.items():
        if e["layout"] == "joint":
            curves = {(o, m): f for o in e["optimizers"] for m, f in joint_curves().items()}
            out[name] = long_table(curves)
        else:
            out[name] = fixed_table(**{
                o: gd_like() if s["rule"] == "gd" else ngd_like(-0.9 - 0.1 * i)
                for i, (o, s) in enumerate(e["optimizers"].items())
            })  # fmt: skip
    return out


def _table(experiments, tables):
    names = list(experiments)
    table = layouts.claims(experiments, tables, {n: [2.0, 2.0] for n in names},
                          {n: 3 for n in names}, {n: GOOD for n in names})  # fmt: skip
    return table.drop(columns=["key"])


def test_renaming_an_optimizer_in_the_tiny_config_gives_the_same_rows_with_its_label():
    """`ngd:` renamed to any key, with its label, gives the same rows: chosen by what the
    optimizer is (its rule and settings), never by its config name."""
    experiments = _tiny_experiments()
    before = _table(experiments, _tables(experiments))
    renamed = {}
    for name, e in experiments.items():
        optimizers = {("normalised" if o == "ngd" else o): s for o, s in e["optimizers"].items()}
        labels = {("normalised" if o == "ngd" else o): ("My NGD" if o == "ngd" else label)
                  for o, label in e["labels"].items()}  # fmt: skip
        renamed[name] = {**e, "optimizers": optimizers, "labels": labels}
    tables = {n: _rename(t, "ngd", "normalised") for n, t in _tables(experiments).items()}
    after = _table(renamed, tables)
    assert len(after) == len(before) and (before["kind"] != "not measured").sum() > 20
    assert after["claim"].str.startswith("My NGD: ").sum() > 10  # the new label is shown
    back = after.replace("My NGD", "NGD", regex=True)
    for column in ("claim", "verdict", "outcome", "category", "mean", "statement"):
        pd.testing.assert_series_equal(back[column], before[column], check_names=False)
    # control: the same rename without its settings (an empty rule) is refused, not guessed
    broken = {
        n: {**e, "optimizers": {**e["optimizers"], "ngd": {}}} for n, e in experiments.items()
    }
    with pytest.raises(KeyError, match="rule"):
        _table(broken, _tables(experiments))


def test_a_bit_identical_run_gives_its_rows_once():
    """fig2's NGD with a cap that never binds is fig2_uncapped's NGD: one set of rows, on the
    uncapped run, which also stands for the capped one (Fig. 2's remarks cover it). The
    control: a cap that changes the run gives rows of its own."""
    opts = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1}}
    capped = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1, "max_step": 1e150}}
    same = fixed_table(gd=gd_like(), ngd=ngd_like(-0.9))
    experiments = {
        "capped": {"layout": "fixed_decoder", "optimizers": capped, "paper_figure": "Fig. 2"},
        "uncapped": {"layout": "fixed_decoder", "optimizers": opts, "paper_figure": "Fig. 2"},
    }
    files = ({n: [2.0, 2.0] for n in experiments}, {n: 3 for n in experiments},
             {n: GOOD for n in experiments})  # fmt: skip
    table = layouts.claims(experiments, {"capped": same, "uncapped": same}, *files)
    ngd = table[table["claim"].str.startswith("ngd:")]
    assert not ngd["experiment"].str.startswith("capped").any()
    assert ngd["experiment"].str.contains(r"\(= capped: bit-identical run\)").all()
    close = table[table["statement"] == "thm1-close"]
    assert len(close) == 1 and close["category"].item() == "covered"
    other = fixed_table(gd=gd_like(), ngd=ngd_like(-1.2))
    table = layouts.claims(experiments, {"capped": other, "uncapped": same}, *files)
    ngd = table[table["claim"].str.startswith("ngd:")]
    assert ngd["experiment"].eq("capped").any() and not ngd["experiment"].str.contains("=").any()
    assert np.array_equal(
        sorted(table.loc[table["statement"] == "thm1-close", "category"]), ["comparison", "covered"]
    )


def test_the_step_size_sweep_judges_with_the_tables_thresholds():
    """eta_cond1 (config.yaml) reads Lem. 11, Thm. 2, 3 and 4 as the claims table does: the
    same thresholds (Thm. 2's exponent negated: a sweep metric is lower-is-faster) and the
    same measuring functions (the sweep metric of Lem. 11 is the table's late_max_growth)."""
    from attnbias.claims import joint, measure
    from attnbias.studies import sweep_metrics

    claims_of = yaml.safe_load((REPO / "config/config.yaml").read_text())["sweeps"]["eta_cond1"]
    thresholds = {c["metric"]: c["threshold"] for c in claims_of["claims"].values()
                  if c["claim"] == "reaches"}  # fmt: skip
    assert thresholds == {
        "loss_ratio_growth": joint.LOSS_RATIO_GROWTH_MAX,
        "loss_exponent": -joint.THM2_EXPONENT,
        "rate_W_lnln": -1.0,
        "final_log10_gap_u": math.log10(joint.U_GAP_MAX),
    }
    t = np.array([0, 10, 100, 1000])
    ratio = np.array([[1.0, 2.0, 2.5, 4.0], [1.0, 1.0, 1.0, 0.5]])
    runs = sweep_metrics.Runs("eq10", t, {"log_loss_ratio": ratio}, [{}, {}], [{}, {}])
    got = sweep_metrics.compute(["loss_ratio_growth"], runs)["loss_ratio_growth"]
    # early: t <= 100 (max 2.5), late: t >= 100 (max 4)
    assert np.array_equal(got, measure.late_max_growth(t, ratio)) and got[0] == 1.5


def test_a_figure_remark_counts_on_the_figures_own_run_only():
    """Fig. 3's "all other algorithms are faster than GD" is covered on a run with the
    figure's algorithms (per-block NGD, PS, joint NGD); an experiment that cites Fig. 3 but
    lacks them (fig3_cond1: no PS) reads it as a comparison."""
    eq10 = {"rule": "ngd", "lr": 1.0, "normalize": "per_block", "decay_W": 1.0, "decay_u": 0.5}
    full = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "normalize": "per_block"},
            "ps": {"rule": "polyak", "f_star": 0}, "joint-ngd": {"rule": "ngd"},
            "eq10": eq10}  # fmt: skip
    fast = joint_curves() | {"log_loss": lambda t, s: -0.2 * t - 0.02}
    slow = joint_curves() | {"gap_W": lambda t, s: 2.0 / t, "log_loss": lambda t, s: -0.1 * t,
                             "gap_u": lambda t, s: 1e-3}  # fmt: skip

    def categories(optimizers):
        curves = {(o, m): f for o in optimizers for m, f in (slow if o == "gd" else fast).items()}
        e = {"layout": "joint", "optimizers": optimizers, "paper_figure": "Fig. 3"}
        table = layouts.claims({"x": e}, {"x": long_table(curves)})
        mine = table[(table["statement"] == "fig3-vs-gd") & table["claim"].str.startswith("ngd:")]
        assert len(mine) == 3 and (mine["outcome"] == "holds").all()  # W, u and the loss
        return set(mine["category"])

    assert categories(full) == {"covered"}
    no_ps = {o: s for o, s in full.items() if o not in ("ps", "joint-ngd")}
    assert categories(no_ps) == {"comparison"}


# ---- every counted row can fail: one control per statement of the counts ------------
# Each entry builds the rows of one statement on a fixture where every counted row holds
# (good=True), and on its own control, made to break that statement (good=False): the same
# rows must then read "does not hold". A statement whose rows cannot fail (Statement.check,
# a bound whose constant was lost, a near-tautology) is a consistency check outside the
# counts and has no entry; test_every_counted_statement_has_a_control holds the two lists
# equal, so a new counted statement needs its control here.


def _loss(curves: dict, log_excess, floor: float = 0.37) -> dict:
    """Fixed-decoder curves with the loss L* + exp(log_excess(t)) and ln(L - L*) logged."""
    return curves | {"log_excess_loss": lambda t, s: log_excess(t),
                     "loss": lambda t, s: floor + math.exp(log_excess(t))}  # fmt: skip


SLOW = _loss(gd_like(), lambda t: -math.log(max(t, 1.0)) - 1)  # GD-like, 1/ln t
FAST = _loss(ngd_like(-0.75), lambda t: -t / 10)  # NGD-like, at Thm. 1's rate t^-3/4
FASTER = _loss(ngd_like(-2.0), lambda t: -t / 5) | {
    "W_norm": lambda t, s: 0.2 * t, "log1m_opt_softmax": lambda t, s: -t / 5}  # fmt: skip
FIG2_OPTS = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "lr": 0.1, "max_step": 1e150},
             "ps": {"rule": "polyak", "eta_max": 1e10},
             "ngd-mom": {"rule": "ngd", "lr": 0.1, "momentum": 0.9, "max_step": 1e150}}  # fmt: skip


def _fixed(curves: dict, optimizers: dict, figure=None, summary=GOOD, layout="fixed_decoder",
           data="Example 1"):  # fmt: skip
    """The rows of one fixed-decoder experiment "x" whose optimizers have `curves`."""
    e = {"layout": layout, "optimizers": optimizers, "seeds": 2, "paper_figure": figure,
         "data": data}  # fmt: skip
    table = fixed_table(**{o: curves[o] for o in optimizers})
    out = layouts.claims({"x": e}, {"x": table}, {"x": [2.0, 2.0]}, {"x": 2}, {"x": summary})
    return list(out.itertuples())


def _fig2(good: bool, **bad) -> list:
    """Fig. 2's four runs (capped NGD, PS and NGD-mom): PS fastest, NGD-mom ahead of NGD,
    NGD at Thm. 1's rate; the control replaces the runs named in `bad`."""
    curves = {"gd": SLOW, "ngd": FAST, "ps": FASTER, "ngd-mom": _loss(ngd_like(-1.0), lambda t: -t)}
    return _fixed(curves | ({} if good else bad), FIG2_OPTS, "Fig. 2")


def _dips(curves: dict) -> dict:
    return curves | {"min_opt_softmax": lambda t, s: 0.9 - 0.1 * (t > 100)}


def _ps_slows(good: bool) -> list:
    def slowing(t, s):  # t^-1.2 up to t = 20, then t^-0.05 (as a binding cap makes it)
        return t**-1.2 if t <= 20 else 20**-1.2 * (t / 20) ** -0.05

    ps = FAST | {"gap_W": slowing if good else lambda t, s: t**-1.2}  # control: one rate
    optimizers = {o: FIG2_OPTS[o] for o in ("gd", "ngd", "ps")}
    return _fixed({"gd": SLOW, "ngd": FAST, "ps": ps}, optimizers,
                  "Fig. 2")  # fmt: skip


def _two_token(good: bool) -> list:
    """Sec. 3.3's example: NGD at t^-2 (its rate there) first to every threshold, GD at
    1/ln^2 t with a log norm; the control swaps them (GD first, at NGD's rates)."""
    ngd = ngd_like(-2.0)
    gd = gd_like() | {"gap_W": lambda t, s: 0.3 / math.log(max(t, 2.0)) ** 2}
    curves = {"gd": gd, "ngd": ngd} if good else {"gd": ngd, "ngd": gd}
    return _fixed(curves, OPTS, layout="two_token")


def _fig9(good: bool) -> list:
    """Fig. 9's run: GD's direction at 1/ln^2 t, NGD's at t^-2 and ahead in every metric,
    the data's scores as Ass. 2 asks."""
    gd = SLOW | {"gap_W": lambda t, s: 0.3 / math.log(max(t, 2.0)) ** 2}
    ngd = FASTER
    summary = dict(GOOD, signal_opt_fraction=1.0)
    if not good:  # the control: the runs swapped and levelling off; the scores break Ass. 2
        gd, ngd = (
            ngd | {"gap_W": lambda t, s: 0.05 + 1 / t},
            gd | {"gap_W": lambda t, s: 0.06 + 1 / t},
        )
        summary = dict(summary, ass2_spread=0.33, ass2_opt_gap=0.046, ass2_holds=False,
                       signal_opt_fraction=0.9)  # fmt: skip
    return _fixed({"gd": gd, "ngd": ngd}, OPTS, "Fig. 9", summary, data="binary digits")


def _bad_init_2d(good: bool) -> list:
    # falls from 0.4 to about 0.24 near t = 30, then rises to 0.999; the control rises from
    # 0.4 at once (no dip) and levels off at 0.55 (never converges)
    dip = lambda t: 0.999 * (1 - math.exp(-t / 300)) + 0.4 * math.exp(-t / 30)  # noqa: E731
    flat = lambda t: 0.55 - 0.15 / (1 + t)  # noqa: E731
    table = bad_init_2d(dip if good else flat)
    excess = (lambda t: -1 - math.log(1 + t)) if good else (lambda t: -1 - 0.5 * (1 - 1 / (1 + t)))
    extra = [("x", o, s, t, "log_excess_loss", excess(float(t))) for o in ("gd", "ngd")
             for s in (0, 1) for t in sorted(set(table["iteration"]))]  # fmt: skip
    if not good:  # the optimal token's softmax of sample 2 levels off too, the gap stalls
        table = table.assign(value=table["value"].where(
            ~table["metric"].isin(["gap_W"]), 0.3))  # fmt: skip
    table = pd.concat([table, pd.DataFrame(extra, columns=table.columns)], ignore_index=True)
    e = {"layout": "bad_init_2d", "optimizers": OPTS, "seeds": 2}
    out = layouts.claims({"x": e}, {"x": table}, {"x": [2.0, 2.0]}, {"x": 2}, {"x": GOOD})
    return list(out.itertuples())


def _bad_init(good: bool) -> list:
    start = 0.2 if good else 0.5  # the control starts on the optimal token's side
    table = long_table({("gd", "opt_softmax"): lambda t, s: start + (1 - start) * t / (1 + t),
                        ("gd", "gap_W"): lambda t, s: 1.0 / (1 + t)})  # fmt: skip
    e = {"layout": "bad_init", "optimizers": {"gd": {"rule": "gd"}}, "seeds": 2}
    return list(layouts.claims({"x": e}, {"x": table}).itertuples())


def _joint(good: bool, summary: dict = JOINT_GOOD) -> list:
    """Eq. 10 on DM data inside Cond. 1 (joint_curves); the control breaks every Lem. 11 /
    Thm. 2-4 property, Lem. 10's log norm (a power law) and u's margin (0.1 of u_mm's)."""
    curves = joint_curves(good) | {
        "W_norm": (lambda t, s: 0.5 + math.log(max(t, 1.0))) if good
        else (lambda t, s: 0.3 * max(t, 1.0) ** 0.3)}  # fmt: skip
    e = {"layout": "joint", "optimizers": {"eq10": EQ10}, "seeds": 2, "data": "data model DM"}
    table = long_table({("eq10", m): f for m, f in curves.items()})
    margins = {"x": {"eq10": [1.0, 0.995] if good else [0.1, 0.2]}}
    out = layouts.claims({"x": e}, {"x": table}, {"x": [2.0, 2.0]}, {"x": 3}, {"x": summary},
                         margins)  # fmt: skip
    return list(out.itertuples())


def _fig3(good: bool, far_ahead: bool = False) -> list:
    """Fig. 3's run: per-block NGD a little ahead of joint NGD, PS ahead of both, all
    ahead of GD, the NGDs' losses alike. The control (good=False): every run behind GD,
    joint NGD ahead of per-block NGD, PS behind both. `far_ahead` (a second control, for
    "slightly" and "similar"): per-block NGD 10 times ahead of joint NGD in W, its loss
    like sqrt(t), joint NGD's like t."""
    full = {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd", "normalize": "per_block"},
            "ps": {"rule": "polyak", "f_star": 0}, "joint-ngd": {"rule": "ngd"}}  # fmt: skip

    def run(gap_W, gap_u, loss, softmax):
        return joint_curves() | {"gap_W": lambda t, s: gap_W / t, "gap_u": lambda t, s: gap_u,
                                 "log_loss": lambda t, s: -loss * t,
                                 "log1m_opt_softmax": lambda t, s: -softmax * t}  # fmt: skip

    gd = run(2.0, 1e-3, 0.01, 0.01)
    curves = {"ngd": run(0.9, 0.9e-5, 0.1, 0.11), "joint-ngd": run(1.0, 1e-5, 0.1, 0.1),
              "ps": run(0.5, 1e-7, 1.0, 1.0)}  # fmt: skip
    if not good:
        curves = {"ngd": run(2.2, 1.1e-3, 0.009, 0.009), "ps": run(2.3, 1.2e-3, 0.008, 0.008),
                  "joint-ngd": run(2.1, 1.05e-3, 0.0095, 0.0095)}  # fmt: skip
    if far_ahead:
        curves["joint-ngd"] = run(9.0, 1e-5, 0.1, 0.1)
        curves["ngd"] = curves["ngd"] | {"log_loss": lambda t, s: -0.1 * math.sqrt(t) - 0.01}
    table = long_table({(o, m): f for o, c in ({"gd": gd} | curves).items() for m, f in c.items()})
    e = {"layout": "joint", "optimizers": full, "seeds": 2, "paper_figure": "Fig. 3"}
    out = layouts.claims({"x": e}, {"x": table}, {"x": [2.0, 2.0]}, {"x": 3}, {"x": JOINT_GOOD})
    return list(out.itertuples())


def _real(good: bool, dataset: str) -> list:
    if dataset == "cifar10":  # Fig. 7: every layer's norm grows (the control: one shrinks)
        norms = [lambda step: 1 + step / 1000, lambda step: 2 + (1 if good else -1) * step / 4000]
        losses = {"sgd": decay(2), "sngd": decay(1), "sps": decay(3), "adam": decay(2.1)}
        if not good:  # SNGD ahead of SGD, PS behind, Adam far ahead
            losses = {"sgd": decay(2), "sngd": decay(3), "sps": decay(1), "adam": decay(20)}
        table = real_table(losses, {o: norms for o in losses})
    else:  # text: SNGD and SPS ahead of SGD (the control: both behind)
        table = real_table({"sgd": decay(1), "sngd": decay(2 if good else 0.5),
                            "sps": decay(3 if good else 0.5), "adam": decay(1.1)})  # fmt: skip
    e = {"layout": "real", "dataset": dataset, "optimizers": REAL_OPTS, "seeds": 2}
    return list(layouts.claims({"r": e}, {"r": table}).itertuples())


def _similarity(good: bool) -> list:
    """Fig. 10 on BERT's MNLI embeddings: 80% of the pairs in the band (the control: 20%)."""
    panel = {"layout": "similarity", "figure": "fig10", "dataset": "mnli", "optimizers": {},
             "scale": "bert token embeddings"}  # fmt: skip
    out = layouts.claims(
        {"fig10/mnli": panel}, {"fig10/mnli": similarity_frame(0.8 if good else 0.2)}
    )
    return list(out.itertuples())


CONTROLS = {
    "thm1-close": lambda good: _fig2(good, ngd=_loss(ngd_like(-2.0), lambda t: -t / 10)),
    "lem3": lambda good: _fig2(good, gd=_dips(SLOW)),
    "lem6": lambda good: _fixed(
        {"gd": SLOW, "ngd": FAST},
        OPTS,
        summary=GOOD if good else dict(GOOD, ass2_holds=False, ass2_spread=0.5),
    ),  # fmt: skip
    "sec33-races": _two_token,
    "sec33-rates": _two_token,
    "sec33-norm": _two_token,
    "fig2-ngd-vs-gd": lambda good: _fig2(good, ngd=SLOW, gd=FAST),
    "fig2-ps-first": lambda good: _fig2(good, ps=SLOW),
    "fig2-momentum": lambda good: _fig2(good, **{"ngd-mom": SLOW}),
    "fig2-ps-all-metrics": lambda good: _fig2(good, ps=SLOW | {"W_norm": lambda t, s: 0.01 * t}),
    "fig2-ps-slows": _ps_slows,
    "fig2-loss-floor": lambda good: _fig2(
        good,
        **{
            o: _loss(c, lambda t: -t / 1000, floor=0.0)
            for o, c in (("gd", SLOW), ("ngd", FAST), ("ps", FASTER), ("ngd-mom", FAST))
        },
    ),  # fmt: skip
    "global-2d": _bad_init_2d,
    "global-2d-loss": _bad_init_2d,
    "fig9-direction": _fig9,
    "fig9-ngd-vs-gd": _fig9,
    "fig9-scores": _fig9,
    # Lem. 9's control: DM data whose tokens are far from orthogonal (Cond. 1 still holds)
    "lem9": lambda good: _joint(
        True, JOINT_GOOD if good else dict(JOINT_GOOD, ass1_rho=0.9, ass1_holds=False)
    ),
    "thm2": _joint,
    "thm4-direction": _joint,
    "thm4-margin": _joint,
    "lem10": _joint,
    "lem11-iii": _joint,
    "lem11-i": _joint,
    "lem11-ii": _joint,
    "fig3-vs-gd": _fig3,
    "fig3-ps-fastest": _fig3,
    "fig3-ngd-vs-joint": _fig3,
    "fig3-loss-similar": _fig3,
    "real-mnli": lambda good: _real(good, "mnli"),
    "real-civil": lambda good: _real(good, "civilcomments"),
    "real-vision-sps": lambda good: _real(good, "cifar10"),
    "real-vision-sngd": lambda good: _real(good, "cifar10"),
    "real-adam": lambda good: _real(good, "cifar10"),
    "real-layer-norms": lambda good: _real(good, "cifar10"),
    "real-orthogonal": _similarity,
}


# statements with rows that no one control fails together: their other controls
MORE_CONTROLS = {
    "fig3-ngd-vs-joint": (lambda: _fig3(True, far_ahead=True),),
    "fig3-loss-similar": (lambda: _fig3(True, far_ahead=True),),
}


def _counted(rows: list, key: str) -> dict:
    """{row key: outcome} of the counted rows (covered, within hypotheses) of `key`."""
    return {r.key: r.outcome for r in rows if r.statement == key and r.category == "covered"}


def test_every_counted_statement_has_a_control():
    """The statements whose rows enter the counts (no check, not a bound, not a
    near-tautology) are exactly those with a control; the beyond-the-paper ones are in
    tests/claims/test_beyond.py's table."""
    counted = {s.key for s in STATEMENTS if not s.check and s.kind not in ("bound", "consistency")}
    assert counted == set(CONTROLS)
    checks = {s.key for s in STATEMENTS} - counted
    assert checks == {"footnote4", "thm6", "thm1-rate", "thm7-rate", "thm3", "thm4-rate", "lem1",
                      "thm1-norm"}  # fmt: skip


@pytest.mark.parametrize("key", sorted(CONTROLS))
def test_each_counted_row_reads_does_not_hold_on_its_control(key):
    """Every counted row of the statement holds on its fixture and reads "does not hold"
    on its control (on one of them, where MORE_CONTROLS lists others)."""
    good = _counted(CONTROLS[key](True), key)
    assert good and set(good.values()) == {"holds"}, good
    controls = [_counted(CONTROLS[key](False), key)]
    controls += [_counted(build(), key) for build in MORE_CONTROLS.get(key, ())]
    failed = {k for bad in controls for k, outcome in bad.items() if outcome == "does not hold"}
    assert failed == good.keys(), controls
