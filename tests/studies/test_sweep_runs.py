"""A sweep point's runs (attnbias.studies.sweep_runs) on a tiny point, and the tables and
figure drawn from them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from tiny_sweep import tiny

from attnbias.studies import (
    sweep_figure,
    sweep_grid,
    sweep_runs,
    sweep_tables,
)
from attnbias.training import kernel, loop

# ---- the grid ---------------------------------------------------------------------------

GRID = {
    "train.iterations": [100],
    "data.params.d": [8, 12],
    "zip": {"optimizers.ngd.lr": [0.1, 0.3], "optimizers.joint-ngd.lr": [0.1, 0.3]},
}


# ---- a point's runs and the tables ----------------------------------------------------


def tiny_point(seeds=2, iterations=150) -> dict:
    entry = {"seeds": seeds, "grid": GRID}
    values = sweep_grid.points(GRID)["d~8_lr~0.1"]
    experiment = sweep_grid.point_experiment(entry, tiny()["experiments"]["fig3"], values)
    experiment["train"] = {
        "iterations": iterations,
        "log_points": 10,
        "grid": "log",
        "loss": "exponential",
        "train_u": True,
    }
    return experiment


METRICS = ["final_log10_gap_W", "final_log10_gap_u", "final_log_loss", "first_W_below_1e-2"]


@pytest.fixture(scope="module")
def tiny_runs():
    return sweep_runs.run_point(tiny_point(), METRICS)


def test_a_point_has_one_row_per_optimizer_and_seed_and_its_curves(tiny_runs):
    runs, curves, record = tiny_runs
    assert record["backend"] == "c"
    assert list(zip(runs["optimizer"], runs["seed"], strict=True)) == [
        (o, s) for o in ("gd", "ngd", "ps", "joint-ngd") for s in (0, 1)
    ]
    assert runs[METRICS[:3]].notna().all().all() and not runs["diverged"].any()
    last = curves[curves["t"] == curves["t"].max()].set_index(["optimizer", "seed"])
    np.testing.assert_allclose(
        np.log10(last["gap_W"].to_numpy()), runs["final_log10_gap_W"].to_numpy()
    )


def test_the_tables_judge_each_point_and_tally_the_claims(tiny_runs):
    runs, curves = (t.assign(point="a") for t in tiny_runs[:2])
    # a: GD far behind every other optimizer; b: every optimizer tied
    runs.loc[runs["optimizer"] == "gd", "final_log10_gap_W"] = 5.0
    second = runs.assign(point="b", final_log10_gap_W=1.0)
    runs = pd.concat([runs, second], ignore_index=True)
    curves = pd.concat([curves, curves.assign(point="b")], ignore_index=True)
    grid = pd.DataFrame({"point": ["a", "b"], "data.params.d": [8, 8]})
    claims = {"gd_slowest_W": {"claim": "slowest", "optimizer": "gd", "metric": METRICS[0]}}
    long, points, verdicts = sweep_tables.tables(runs, curves, grid, METRICS, claims)
    assert len(long) == len(runs) and "data.params.d" in long
    assert list(points["gd_slowest_W"]) == [True, False]  # b: every optimizer tied at 1.0
    assert verdicts.loc[0, "verdict"] == "holds in 1 of 2 settings"


def test_condition_report_measures_the_opt_token_against_the_longest_other():
    X = np.zeros((2, 3, 4))
    X[0, 0, 0], X[1, 0, 1] = 3.0, 2.0  # opt norms 3 and 2
    X[0, 1, 2], X[1, 2, 3] = 0.5, 1.0  # the longest other token: 1
    report = sweep_runs.condition_report({"X": X, "opt": np.zeros(2, dtype=int)})
    assert report["opt_norm_ratio"] == pytest.approx(2.0)
    assert report["d_over_n"] == 2.0
    assert report["min_sq_norm"] == 0.0 and report["max_offdiag_inner"] == 0.0


def point_tables(tiny_runs, axes: list[dict]):
    """The tiny point's runs copied to every point of `axes` (values as the grid gives them)."""
    combos = list(itertools.product(*(a["values"] for a in axes)))
    names = ["_".join(f"{a['label']}~{v}" for a, v in zip(axes, c, strict=True)) for c in combos]
    runs = pd.concat([tiny_runs[0].assign(point=n) for n in names], ignore_index=True)
    curves = pd.concat([tiny_runs[1].assign(point=n) for n in names], ignore_index=True)
    grid = pd.DataFrame(
        {"point": names, **{a["keys"][0]: [c[i] for c in combos] for i, a in enumerate(axes)}}
    )
    claims = {"gd_slowest_W": {"claim": "slowest", "optimizer": "gd", "metric": METRICS[0]}}
    return sweep_tables.tables(runs, curves, grid, METRICS, claims)


AXES = [
    {"label": "d", "keys": ["data.params.d"], "values": [8, 80]},
    {"label": "lr", "keys": ["optimizers.ngd.lr"], "values": [0.1, 0.3]},
    {"label": "eta_max", "keys": ["optimizers.ps.eta_max"], "values": [None, 1e10]},
]


@pytest.mark.parametrize("swept, heat_maps", [(1, 0), (2, 2 * 4), (3, 0)])
def test_the_figure_has_lines_for_one_key_and_heat_maps_for_two(
    tiny_runs, tmp_path, monkeypatch, swept, heat_maps
):
    import attnbias.figures.save as figures

    drawn = []
    monkeypatch.setattr(figures, "save_figure", lambda fig, *args, **kwargs: drawn.append(fig))
    long, points, verdicts = point_tables(tiny_runs, AXES[:swept])
    legend = {o: (o.upper(), "") for o in ("gd", "ngd", "ps", "joint-ngd")}
    sweep_figure.draw(
        long, points, verdicts, axes=AXES[:swept], metrics=METRICS[:2], legend=legend,
        algorithms={o: o for o in legend}, title="t", outputs=[tmp_path / "x.png"],
    )  # fmt: skip
    axes = drawn[0].axes
    grid = not sweep_figure.holds_everywhere(points, verdicts, long["seed"].nunique())
    assert sum(bool(ax.images) for ax in axes) == heat_maps + grid  # + the verdict grid
    lines = [ax for ax in axes if len(ax.get_lines()) == 4]  # a line per optimizer
    # lines: a panel per metric (three keys: the first, pooled over the other two)
    assert len(lines) == (0 if swept == 2 else 2)


def test_a_diverged_seed_gets_nan_and_the_others_keep_their_numbers(monkeypatch):
    experiment = {
        **tiny_point(iterations=20),
        "optimizers": {"ps": {"rule": "polyak", "f_star": 0}},
    }
    clean, *_ = sweep_runs.run_point(experiment, METRICS)
    real = loop.train

    def train(*args, **kwargs):
        table, final = real(*args, **kwargs)
        for values in table.values():
            values[-1] = np.nan
        return table, final

    monkeypatch.setattr(loop, "train", train)
    runs, *_ = sweep_runs.run_point(experiment, METRICS)
    assert list(runs["diverged"]) == [False, True]
    assert np.isnan(runs.loc[1, "final_log10_gap_W"])
    assert runs.loc[0, "final_log10_gap_W"] == clean.loc[0, "final_log10_gap_W"]


def test_the_kernel_and_torch_agree_on_a_point(monkeypatch, tiny_runs):
    pytest.importorskip("torch")
    monkeypatch.setattr(kernel, "supports", lambda spec, rule=None: False)  # dispatch's hook: torch
    reference, _, record = sweep_runs.run_point(tiny_point(), METRICS)
    assert record["backend"] == "torch"
    for column in METRICS:
        np.testing.assert_allclose(tiny_runs[0][column], reference[column], rtol=1e-7)
