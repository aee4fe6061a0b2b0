"""The claims' robustness to the constants the paper lost and we chose: the points of a
constant (attnbias.studies.robustness_points) on a tiny fixed-decoder experiment trained
here, their comparison with ours and the column it gives (attnbias.claims.robustness), the
table's absence, the workflow's reading of `claims_robustness` and its refusals.
"""

from __future__ import annotations

import pandas as pd
import pytest

from attnbias.claims import robustness
from attnbias.claims.inputs import ExperimentInputs
from attnbias.claims.write import COMPACT, robustness_line, summary_line, to_markdown
from attnbias.data import hypotheses, models
from attnbias.optim.spec import config_settings
from attnbias.studies import robustness_points
from attnbias.svm import max_margin
from attnbias.workflow.config import canonical

BACKEND = {"device": "cpu", "dtype": "float64"}


# a tiny Fig. 2: Example 1 at n = 6, T = 3, d = 12, two seeds, 300 steps (as config/tiny.yaml)
OPTIMIZERS = {
    "gd": {"rule": "gd", "lr": 1.0},
    "ngd": {"rule": "ngd", "lr": 0.1},
    "ps": {"rule": "polyak", "f_star": "opt"},
    "ngd-mom": {"rule": "ngd", "lr": 0.1, "momentum": 0.9, "max_step": 1.0e150},
}


SETTINGS = {
    "fig2": {
        "layout": "fixed_decoder",
        "seeds": 2,
        "paper_figure": "Fig. 2",
        "labels": {"gd": "GD", "ngd": "NGD", "ps": "PS", "ngd-mom": "NGD-mom"},
        "train": {
            "iterations": 300,
            "log_points": 20,
            "grid": "log",
            "loss": "exponential",
            "train_u": False,
        },  # fmt: skip
        "optimizers": {n: canonical(config_settings(o)) for n, o in OPTIMIZERS.items()},
    }
}


MOMENTUM_RACE = "fig2 ngd-mom ahead of ngd"  # Fig. 2's "performance boost" of NGD-mom


@pytest.fixture(scope="module")
def tiny_fig2() -> dict[str, ExperimentInputs]:
    """The tiny Fig. 2's data, SVMs, hypotheses and every run, as the claims job reads them."""
    datasets = {s: models.generate("example1", s, {"n": 6, "T": 3, "d": 12}) for s in range(2)}
    solutions = {
        s: max_margin.to_arrays(max_margin.solve_for_dataset(d, False, name=f"seed {s}"))
        for s, d in datasets.items()
    }
    reports = [
        {**hypotheses.report(datasets[s]), **hypotheses.svm_report(datasets[s], solutions[s])}
        for s in datasets
    ]
    empty = pd.DataFrame(columns=["experiment", "optimizer", "seed", "iteration", "metric",
                                  "value"])  # fmt: skip
    base = ExperimentInputs(empty, datasets, solutions, reports, None)
    return {"fig2": robustness_points.train("fig2", SETTINGS["fig2"], base, list(OPTIMIZERS),
                                            **BACKEND)}  # fmt: skip


@pytest.fixture(scope="module")
def momentum_cap_points(tiny_fig2) -> pd.DataFrame:
    """NGD-mom's cap at 1e-3 (binding from the first step: NGD-mom crawls) and ours, 1e150."""
    paths = {"fig2": ["optimizers.ngd-mom.max_step"]}
    return robustness_points.points(paths, [1e-3, 1e150], 1e150, SETTINGS, tiny_fig2, **BACKEND)


def constant(plausible, values=(1e-3, 1e150)) -> robustness.Constant:
    return robustness.Constant("mom_cap", "NGD-mom's max_step", 1e150, values, plausible)


def test_only_the_changed_runs_train_again_and_ours_is_the_base_bitwise(tiny_fig2):
    base = SETTINGS["fig2"]
    point = robustness_points.point_settings(
        {"fig2": ["optimizers.ngd-mom.max_step"]}, SETTINGS, 1e-3
    )["fig2"]
    assert robustness_points.retrained(base, point) == ["ngd-mom"]
    longer = robustness_points.point_settings({"fig2": ["train.iterations"]}, SETTINGS, 600)
    assert robustness_points.retrained(base, longer["fig2"]) == list(OPTIMIZERS)
    # the same settings trained again give the default build's numbers, bit for bit
    again = robustness_points.train("fig2", base, tiny_fig2["fig2"], ["ngd"], **BACKEND)
    pd.testing.assert_frame_equal(again.table, tiny_fig2["fig2"].table)
    # a retrained optimizer leaves the others' rows as they were
    capped = robustness_points.train("fig2", point, tiny_fig2["fig2"], ["ngd-mom"], **BACKEND)

    def others(table):
        return table[table["optimizer"] != "ngd-mom"].reset_index(drop=True)

    pd.testing.assert_frame_equal(others(capped.table), others(tiny_fig2["fig2"].table))


def test_a_verdict_that_flips_inside_the_plausible_range_is_fragile(momentum_cap_points):
    # negative control: a cap that binds from the first step takes NGD-mom's lead away
    points = momentum_cap_points
    ours = points[points["value"] == 1e150].set_index("key")
    assert ours.loc[MOMENTUM_RACE, "outcome"] == "holds"
    found = robustness.compare(constant((1e-3, 1e150)), points).set_index("key")
    row = found.loc[MOMENTUM_RACE]
    assert row["fragile"]
    assert row["range"] == (
        "holds at NGD-mom's max_step = 1e150 only; does not hold at 0.001 (2 of 2 seeds)"
    )
    assert row["outcomes"] == "does not hold (2 of 2 seeds), holds"
    # the same flip outside the plausible range: named, not fragile
    outside = robustness.compare(constant((1.0, 1e150)), points).set_index("key")
    assert not outside.loc[MOMENTUM_RACE, "fragile"]
    assert "does not hold at 0.001" in outside.loc[MOMENTUM_RACE, "range"]


def test_a_row_whose_numbers_change_but_not_its_verdict_is_listed_not_fragile(
    momentum_cap_points,
):
    points = momentum_cap_points
    found = robustness.compare(constant((1e-3, 1e150)), points).set_index("key")
    steady = found[~found["fragile"]]
    assert len(steady), "no row depends on the cap without flipping"
    for key, row in steady.iterrows():
        outcome = points[(points["key"] == key) & (points["value"] == 1e150)]["outcome"].item()
        assert row["range"] == f"{outcome} for NGD-mom's max_step in [0.001, 1e150]"
    # the rows that read no NGD-mom run do not depend on its cap
    assert not [k for k in found.index if "ngd-mom" not in k and "fastest" not in k]
    assert "fig2 gd softmax monotone" not in found.index


def test_the_column_and_the_summary_line_count_the_fragile_verdicts(tiny_fig2, momentum_cap_points):
    points = momentum_cap_points
    found = robustness.compare(constant((1e-3, 1e150)), points)
    claims = robustness.annotate(robustness_points.measure(SETTINGS, tiny_fig2), found)
    cell = claims.set_index("key").loc[MOMENTUM_RACE, "robustness"]
    assert cell.startswith("NGD-mom's max_step = 1e150 (ours): holds at")
    assert cell.endswith("FRAGILE: flips inside the plausible range [0.001, 1e150]")
    line = robustness_line(claims)
    assert line not in summary_line(claims)  # a line of its own: the counts read the same
    assert f"**{line}**" in to_markdown(claims)
    assert (
        f"{len(found)} verdicts depend on constants the paper lost and we chose, "
        f"{int(found['fragile'].sum())} fragile" in line
    )
    assert "robustness" in COMPACT and "FRAGILE" in to_markdown(claims)
    assert "| claim | where | value | robustness | verdict |" in to_markdown(claims)
    markdown = robustness.to_markdown(found, {"mom_cap": _described()})
    assert "ngd-mom ahead of ngd | does not hold (2 of 2 seeds), holds |" in markdown


def test_without_a_robustness_table_the_claims_say_why(tiny_fig2):
    claims = robustness_points.measure(SETTINGS, tiny_fig2)
    absent = robustness.annotate(claims, None, "the config's claims_robustness names no constant")
    counted = absent["category"].isin(robustness.COUNTED)
    assert (
        absent.loc[counted, "robustness"]
        == "not measured: the config's claims_robustness names no constant"
    ).all()
    assert (absent.loc[~counted, "robustness"] == "").all()
    assert robustness_line(absent) == (
        "Robustness to our constants not measured: the config's claims_robustness names no "
        "constant."
    )
    # a table that never met the robustness column (the study's) keeps its summary line
    assert robustness_line(claims) == ""
    # said once, in the summary line: the Markdown's tables leave the column out
    markdown = to_markdown(absent)
    assert markdown.count("not measured: the config") == 1
    assert "| claim | where | value | verdict |" in markdown and "| robustness |" not in markdown


def test_every_counted_row_names_the_constants_that_may_decide_it(tiny_fig2, momentum_cap_points):
    """Built or not, a row names every number in the settings of each optimizer it reads,
    and the horizon where a claims_robustness constant sets it for its kind of test; the
    Markdown shows them where the robustness column is not measured."""
    described = {
        "mom_cap": _described(),
        "horizon": {**_described(), "label": "t_last", "ours": 300, "kinds": ["race"],
                    "set": {"fig2": ["train.iterations"]}},
        "other": {**_described(), "label": "elsewhere", "set": {"fig3": ["train.iterations"]}},
    }  # fmt: skip
    claims = robustness_points.measure(SETTINGS, tiny_fig2)
    absent = robustness.annotate(claims, None, "build it")
    table = robustness.named(absent, described, SETTINGS).set_index("key")
    assert table.loc[MOMENTUM_RACE, "constants"].split("; ") == [
        "NGD's lr = 0.1", "NGD-mom's lr = 0.1", "NGD-mom's max_step = 1e150",
        "NGD-mom's momentum = 0.9", "t_last = 300",
    ]  # fmt: skip
    counted = table[table["category"].isin(robustness.COUNTED)]
    races = counted["kind"] == "race"
    assert races.any() and counted.loc[races, "constants"].str.endswith("t_last = 300").all()
    others = counted.loc[~races, "constants"]
    assert len(others) and not others.str.contains("t_last|elsewhere").any()
    gd_rows = counted[counted.index.str.contains(" gd ")]
    assert len(gd_rows) and gd_rows["constants"].str.contains("GD's lr = 1").all()
    assert (table.loc[~table["category"].isin(robustness.COUNTED), "constants"] == "").all()
    markdown = to_markdown(table.reset_index())
    assert "| claim | where | value | constants | verdict |" in markdown
    assert "NGD-mom's momentum = 0.9; t_last = 300 |" in markdown
    # measured robustness cells: the ranges beside the constants
    found = robustness.compare(constant((1e-3, 1e150)), momentum_cap_points)
    measured = robustness.annotate(claims, found)
    both = "| claim | where | value | constants | robustness | verdict |"
    assert both in to_markdown(robustness.named(measured, described, SETTINGS))


def test_range_texts_name_every_value_where_the_outcome_differs():
    c = robustness.Constant("eta", "eta", 1.0, (0.1, 0.3, 1.0, 3.0), (0.1, 1.0))
    outcomes = {0.1: "does not hold", 0.3: "holds", 1.0: "holds", 3.0: "undecided"}
    texts = {**outcomes, 0.1: "does not hold (4 of 5 seeds)", 3.0: "undecided (5 of 5 seeds)"}
    assert robustness.range_text(c, outcomes, texts) == (
        "holds for eta in [0.3, 1]; does not hold at 0.1 (4 of 5 seeds); undecided at 3 "
        "(5 of 5 seeds)"
    )
    assert [robustness.number(v) for v in (0.1, 30000, 1e5, 1e150, 2.5e-5)] == [
        "0.1", "30000", "1e5", "1e150", "2.5e-5"
    ]  # fmt: skip


CAPS = (1e10, 1e50, 1e100, 1e148, 1e308)  # the cap constants' values (config's claims_robustness)


def synthetic_points(outcomes: dict[float, str], seeds_alike: dict[float, int]) -> pd.DataFrame:
    """A cap constant's points for one race row: its outcome at each value (the numbers
    change with it), and where it differs from ours, on how many of 10 seeds alone."""
    return pd.DataFrame(
        [
            {"value": v, "key": "fig2 ps ahead of ngd", "experiment": "fig2", "claim": "PS ahead",
             "kind": "race", "category": "covered", "outcome": o, "verdict": o, "mean": v / 1e300,
             "low": 0.0, "high": 1.0, "value_text": f"at {v:g}", "seeds_alike":
             seeds_alike.get(v, robustness_points.NOT_JUDGED), "seeds": 10}
            for v, o in outcomes.items()
        ]
    )  # fmt: skip


def test_a_cap_row_prints_where_its_verdict_flips_with_the_values_tried():
    """The default build's cap constants (claims_robustness_default): a row's cell names the
    range over which the verdict holds and the values tried; where it flips inside the
    plausible range, the flip (control: the same row holding at every cap reads the whole
    range, not fragile)."""
    ps_cap = robustness.Constant("ps_cap", "PS's cap (eta_max)", 1e308, CAPS, (1e10, 1e308))
    flips = dict.fromkeys(CAPS, "holds") | {1e10: "does not hold", 1e50: "does not hold"}
    found = robustness.compare(ps_cap, synthetic_points(flips, {1e10: 10, 1e50: 6}))
    text = robustness.cell(found.iloc[0])
    assert text == (
        "PS's cap (eta_max) = 1e308 (ours): holds for PS's cap (eta_max) in [1e100, 1e308]; "
        "does not hold at 1e10 (10 of 10 seeds), 1e50 (6 of 10 seeds) (tried: 1e10, 1e50, "
        "1e100, 1e148, 1e308); FRAGILE: flips inside the plausible range [1e10, 1e308]"
    )
    steady = robustness.compare(ps_cap, synthetic_points(dict.fromkeys(CAPS, "holds"), {}))
    assert robustness.cell(steady.iloc[0]) == (
        "PS's cap (eta_max) = 1e308 (ours): holds for PS's cap (eta_max) in [1e10, 1e308] "
        "(tried: 1e10, 1e50, 1e100, 1e148, 1e308)"
    )


def test_a_partial_table_names_the_constants_left_unmeasured(tiny_fig2, momentum_cap_points):
    """Where only the default build's constants are measured, the summary line says so and
    names the others, with how to measure them (control: the whole table's line)."""
    claims = robustness_points.measure(SETTINGS, tiny_fig2)
    found = robustness.compare(constant((1e-3, 1e150)), momentum_cap_points)
    partial = robustness.annotate(claims, found, "", (["gd_lr", "horizon"], "build it"))
    line = robustness_line(partial)
    assert line.startswith(
        f"Measured in this build for the constants of the default build only: {len(found)} "
        f"verdicts depend on them, {int(found['fragile'].sum())} fragile"
    )
    assert line.endswith("the constants gd_lr, horizon not measured: build it.")
    cell = partial.set_index("key").loc[MOMENTUM_RACE, "robustness"]
    assert "does not hold at 0.001 (2 of 2 seeds) (tried: 0.001, 1e150)" in cell
    whole = robustness.annotate(claims, found, "", ([], ""))
    assert robustness_line(whole).startswith(f"{len(found)} verdicts depend on constants")


# ---- helpers ----------------------------------------------------------------------------------


def _described() -> dict:
    return {"label": "NGD-mom's max_step", "ours": 1e150, "values": [1e-3, 1e150],
            "plausible": [1e-3, 1e150], "why": "a test", "kinds": None,
            "set": {"fig2": ["optimizers.ngd-mom.max_step"]}}  # fmt: skip
