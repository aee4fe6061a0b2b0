"""The registry of the paper's statements (attnbias.claims.statements): every entry yields
rows or a "not measured" line; rows follow what an optimizer is, not its config name; the
real-data statements read run tables of the real schema, with a control for each."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml
from project import REPO
from test_claims_table import GOOD, fixed_table, gd_like, joint_curves, long_table, ngd_like

from attnbias.claims import layouts, write
from attnbias.claims.beyond import BEYOND
from attnbias.claims.statements import STATEMENTS

REAL_COLUMNS = ["experiment", "optimizer", "seed", "iteration", "metric", "value"]


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


# ---- the real-data statements, on tables of the real runs' schema ------------------


def real_table(losses: dict, norms: dict | None = None, steps=range(0, 2001, 100)) -> pd.DataFrame:
    """{optimizer: loss(step, seed)} (and {optimizer: [norm(step) per layer]}) -> the real
    runs' long table (experiment, optimizer, seed, iteration = step, metric, value)."""
    rows = []
    for opt, loss in losses.items():
        for seed in (0, 1):
            for step in steps:
                rows.append(("r", opt, seed, step, "train_loss", loss(step, seed)))
                for i, norm in enumerate((norms or {}).get(opt, [])):
                    rows.append(("r", opt, seed, step, f"norm/{i:02d} layer{i}", norm(step)))
    return pd.DataFrame(rows, columns=REAL_COLUMNS)


REAL_OPTS = {"sgd": {"rule": "sgd", "lr": 0.1}, "sngd": {"rule": "sngd", "lr": 0.5},
             "sps": {"rule": "sps", "c": 0.5}, "adam": {"rule": "adam", "lr": 1e-3}}  # fmt: skip


def real_rows(table, dataset):
    experiment = {"layout": "real", "dataset": dataset, "optimizers": REAL_OPTS, "seeds": 2,
                  "labels": {o: o.upper() for o in REAL_OPTS}}  # fmt: skip
    out = layouts.claims({"r": experiment}, {"r": table})
    return out[out["kind"] != "not measured"].set_index("key")


def decay(rate):
    return lambda step, seed: 2.0 * math.exp(-rate * step / 1000) + 0.01 * seed


def test_faster_than_sgd_holds_on_a_faster_loss_and_fails_on_a_slower_one():
    fast = real_table({"sgd": decay(1), "sngd": decay(2), "sps": decay(3), "adam": decay(1.1)})
    rows = real_rows(fast, "mnli")
    assert rows.loc["r sngd faster than sgd", "verdict"].startswith("holds")
    assert rows.loc["r sps faster than sgd", "category"] == "covered"
    assert "SNGD" in rows.loc["r sngd faster than sgd", "value_text"]  # both numbers shown
    slow = real_table({"sgd": decay(2), "sngd": decay(1), "sps": decay(3), "adam": decay(2)})
    rows = real_rows(slow, "mnli")
    assert rows.loc["r sngd faster than sgd", "outcome"] == "does not hold"
    assert rows.loc["r sps faster than sgd", "outcome"] == "holds"
    assert "r sngd faster than sgd" not in real_rows(slow, "cifar10").index  # text only


def test_vision_statements_sps_ahead_sngd_behind_and_adam_like_sgd():
    paper = real_table({"sgd": decay(2), "sngd": decay(1), "sps": decay(3), "adam": decay(2.1)})
    # a subset of MNIST (with a reduced ViT) is measured alike, as a comparison: the
    # statement is made for the paper's setting
    subset, full = real_rows(paper, "mnist5k"), real_rows(paper, "mnist")
    assert subset["outcome"].equals(full["outcome"])
    assert set(full["category"]) == {"covered"} and set(subset["category"]) == {"comparison"}
    assert all(v.startswith("comparison: holds") for v in subset["verdict"])
    assert all("(mnist5k, 2 seeds)" in e for e in subset["experiment"])
    rows = real_rows(paper, "mnist")
    assert rows.loc["r sps faster than sgd", "outcome"] == "holds"
    assert rows.loc["r sgd faster than sngd", "outcome"] == "holds"  # SNGD trains slower
    assert rows.loc["r adam like sgd", "outcome"] == "holds"
    assert "our threshold 2" in rows.loc["r adam like sgd", "verdict"]
    # controls: SNGD ahead of SGD, and Adam far ahead of it
    other = real_table({"sgd": decay(1), "sngd": decay(2), "sps": decay(3), "adam": decay(10)})
    rows = real_rows(other, "mnist")
    assert rows.loc["r sgd faster than sngd", "outcome"] == "does not hold"
    assert rows.loc["r adam like sgd", "outcome"] == "does not hold"


def test_text_statements_are_measured_on_their_stand_ins_as_comparisons():
    """Fig. 1's and Fig. 4's race read on other text (MiniLM on Rotten Tomatoes, SMS spam):
    the same test as on MNLI, a comparison, never a verdict; "where" names data and scale."""
    paper = real_table({"sgd": decay(1), "sngd": decay(2), "sps": decay(0.5), "adam": decay(1)})
    mnli = real_rows(paper, "mnli")
    for stand_in, statement in (("rotten_tomatoes", "real-mnli"), ("sms_spam", "real-civil")):
        experiment = {"layout": "real", "dataset": stand_in, "optimizers": REAL_OPTS, "seeds": 2,
                      "scale": "minilm, 1,280 train, 1 epoch(s) of batch 16"}  # fmt: skip
        out = layouts.claims({"r": experiment}, {"r": paper})
        rows = out[out["statement"] == statement].set_index("key")
        assert set(rows.index) == {"r sngd faster than sgd", "r sps faster than sgd"}
        assert set(rows["category"]) == {"comparison"}
        assert rows["outcome"].equals(mnli.loc[rows.index, "outcome"])
        assert rows.loc["r sps faster than sgd", "outcome"] == "does not hold"  # the control
        assert all(e == f"r ({stand_in}, minilm, 1,280 train, 1 epoch(s) of batch 16, 2 seeds)"
                   for e in rows["experiment"])  # fmt: skip
        assert all(stand_in in a and "other data and model" in a for a in rows["algorithm"])
        # the other text statement does not read it
        other = "real-civil" if statement == "real-mnli" else "real-mnli"
        assert set(out[out["statement"] == other]["kind"]) == {"not measured"}


def similarity_frame(share: float, band: float = 0.1) -> pd.DataFrame:
    """A similarity table as token_similarity writes it: bins, with the summary on each row."""
    return pd.DataFrame({"lo": [-1.0, 0.0], "hi": [0.0, 1.0], "count": [5, 5], "texts": 40,
                         "pairs": 1234, "identical_pairs": 3, "band": band,
                         "within_band": share})  # fmt: skip


def test_near_orthogonality_is_read_from_the_similarity_tables():
    panels = {
        f"fig10_minilm/{d}": {"layout": "similarity", "figure": "fig10_minilm", "dataset": d,
                              "scale": "minilm token embeddings", "optimizers": {}}
        for d in ("rotten_tomatoes", "sms_spam")
    }  # fmt: skip
    tables = {"fig10_minilm/rotten_tomatoes": similarity_frame(0.67),
              "fig10_minilm/sms_spam": similarity_frame(0.31)}  # fmt: skip
    out = layouts.claims(panels, tables)
    rows = out[out["statement"] == "real-orthogonal"].set_index("key")
    assert list(rows.index) == ["fig10_minilm rotten_tomatoes orthogonal",
                                "fig10_minilm sms_spam orthogonal"]  # fmt: skip
    assert rows["outcome"].tolist() == ["holds", "does not hold"]  # 0.31 < half: the control
    assert set(rows["category"]) == {"comparison"}
    assert rows["experiment"].iloc[0] == "fig10_minilm (rotten_tomatoes, minilm token embeddings)"
    assert "67.0% of the pairs" in rows["value_text"].iloc[0]
    # BERT on the paper's data is the statement's own: a verdict
    own = {"fig10/mnli": {**panels["fig10_minilm/sms_spam"], "figure": "fig10", "dataset": "mnli"}}
    row = layouts.claims(own, {"fig10/mnli": similarity_frame(0.8)})
    row = row[row["statement"] == "real-orthogonal"].iloc[0]
    assert row["category"] == "covered" and row["outcome"] == "holds"


def test_layer_norms_grow_and_its_control():
    grow = [lambda s: 1 + s / 1000, lambda s: 2 + s / 500]
    rows = real_rows(real_table({o: decay(1) for o in REAL_OPTS},
                                {o: grow for o in REAL_OPTS}), "cifar10")  # fmt: skip
    assert rows.loc["r sgd layer norms grow", "outcome"] == "holds"
    shrink = [lambda s: 1 + s / 1000, lambda s: 2 - s / 5000]
    rows = real_rows(real_table({o: decay(1) for o in REAL_OPTS},
                                {o: shrink for o in REAL_OPTS}), "cifar10")  # fmt: skip
    assert rows.loc["r sgd layer norms grow", "outcome"] == "does not hold"
    assert rows.loc["r sgd layer norms grow", "mean"] == pytest.approx(0.5)


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


def test_a_real_data_optimizer_is_its_rule_whatever_torch_settings_it_has():
    """A real-data Adam with the schema's torch settings (betas, weight_decay) is "adam",
    not a full-batch OptimizerSpec (which refuses those settings)."""
    from attnbias.optim.algorithm import algorithm

    settings = {"rule": "adam", "lr": 1e-3, "betas": [0.9, 0.99], "weight_decay": 0.01}
    assert algorithm(settings, "real") == "adam"
    assert algorithm({"rule": "sngd", "lr": 0.1}, "real") == "sngd"


def capped_table(share: float, **losses) -> pd.DataFrame:
    """real_table with SPS's cap_bound_share: `share` at every log point after step 0 (NaN
    at step 0, as the trainer logs it)."""
    table = real_table(losses or {"sgd": decay(1), "sps": decay(1.5)})
    sps = table[(table["optimizer"] == "sps") & (table["metric"] == "train_loss")]
    cap = sps.assign(metric="cap_bound_share", value=share)
    cap.loc[cap["iteration"] == 0, "value"] = math.nan  # no step before step 0
    return pd.concat([table, cap], ignore_index=True)


CAPPED_OPTS = {"sgd": {"rule": "sgd", "lr": 0.1}, "sps": {"rule": "sps", "c": 0.5, "eta_max": 0.1}}


def capped_rows(table, dataset="mnli"):
    experiment = {"layout": "real", "dataset": dataset, "optimizers": CAPPED_OPTS, "seeds": 2,
                  "labels": {"sgd": "SGD", "sps": "SPS"},
                  "scale": "minilm, 1,280 train, 1 epoch(s) of batch 16"}  # fmt: skip
    out = layouts.claims({"r": experiment}, {"r": table})
    return out[out["kind"] != "not measured"].set_index("key")


def test_a_run_whose_cap_bound_at_every_step_is_reported_as_the_sgd_it_became():
    """SPS with its cap binding at every step is SGD with lr eta_max: its race against SGD
    is a comparison that says so, not a verdict on SPS; a cap that bound at half the steps
    of one window leaves it SPS."""
    row = capped_rows(capped_table(1.0)).loc["r sps faster than sgd"]
    assert row["claim"].startswith("SPS (cap bound at every step: SGD with lr 0.1): ")
    assert row["category"] == "comparison"
    assert row["verdict"].startswith("comparison: holds")
    assert "SGD with lr 0.1" in row["algorithm"] and "cap bound at every step" in row["algorithm"]
    half = capped_table(1.0)
    at = (half["metric"] == "cap_bound_share") & (half["seed"] == 1) & (half["iteration"] == 500)
    half.loc[at, "value"] = 0.5
    row = capped_rows(half).loc["r sps faster than sgd"]
    assert row["claim"].startswith("SPS: ") and row["category"] == "covered"
    # the row says at how many steps the cap bound: all but half of one 100-step window
    assert row["value_text"].endswith(
        "; SPS's cap bound at 3950 of 4000 steps (seeds 0, 1: 2000, 1950 of 2000): "
        "a bound step is SGD with lr 0.1's"
    )
    assert capped_rows(capped_table(0.0)).loc["r sps faster than sgd", "category"] == "covered"
    # on stand-in data both reasons are named
    row = capped_rows(capped_table(1.0), "rotten_tomatoes").loc["r sps faster than sgd"]
    assert "SGD with lr 0.1" in row["algorithm"] and "other data and model" in row["algorithm"]


def test_sgd_racing_an_sngd_that_became_sgd_is_a_comparison():
    table = capped_table(1.0).replace({"optimizer": {"sps": "sngd"}})
    opts = {"sgd": CAPPED_OPTS["sgd"], "sngd": {"rule": "sngd", "lr": 0.1, "max_step": 0.2}}
    experiment = {"layout": "real", "dataset": "mnist", "optimizers": opts, "seeds": 2,
                  "labels": {"sgd": "SGD", "sngd": "SNGD"}}  # fmt: skip
    out = layouts.claims({"r": experiment}, {"r": table}).set_index("key")
    row = out.loc["r sgd faster than sngd"]
    assert row["category"] == "comparison" and "SGD with lr 0.2" in row["algorithm"]
    assert "SNGD (cap bound at every step: SGD with lr 0.2)" in row["claim"]
