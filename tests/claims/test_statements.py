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
from claims_tables import GOOD, fixed_table, gd_like, joint_curves, long_table, ngd_like
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
