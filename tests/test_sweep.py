"""Sweeps: the grid and its point names (attnbias.studies.sweep_grid), the metrics and claims
registries, one point's runs (sweep_runs), the tables (sweep), the config's refusals
(sweepcheck), and Snakemake's plan: one job per point, only new points built, a change to
the base experiment reruns the points it changes."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from project import REPO, checked_config, copy_project, planned_jobs, snakemake

from attnbias.studies import (
    sweep_claims,
    sweep_figure,
    sweep_grid,
    sweep_metrics,
    sweep_runs,
    sweep_tables,
)
from attnbias.studies.sweep_config import SweepConfig
from attnbias.svm import max_margin
from attnbias.training import kernel, loop
from attnbias.workflow import configkeys, parquet, store

SWEEP_TARGET = "results-tiny/sweeps/fig3.pdf"


# fig3's sweep, tiny: 2 d x 2 lr points. Not in config/tiny.yaml, whose experiments other
# tests replace (a sweep of a base they remove would be refused).
TINY_SWEEP = {
    "base": "fig3",
    "seeds": 2,
    "grid": {
        "train.iterations": [200],
        "data.params.d": [12, 16],
        "zip": {"optimizers.ngd.lr": [0.1, 0.3], "optimizers.joint-ngd.lr": [0.1, 0.3]},
    },
    "metrics": ["final_log10_gap_W", "final_log_loss"],
    "claims": {
        "gd_slowest_W": {"claim": "slowest", "optimizer": "gd", "metric": "final_log10_gap_W"},
        "ngd_ahead_W": {
            "claim": "ahead",
            "a": "ngd",
            "b": "joint-ngd",
            "metric": "final_log10_gap_W",
        },
    },
}


def tiny() -> dict:
    """config/tiny.yaml with the tiny sweep `fig3`."""
    config = yaml.safe_load((REPO / "config/tiny.yaml").read_text())
    config["sweeps"] = {"fig3": copy.deepcopy(TINY_SWEEP)}
    return config


# ---- the grid ---------------------------------------------------------------------------

GRID = {
    "train.iterations": [100],
    "data.params.d": [8, 12],
    "zip": {"optimizers.ngd.lr": [0.1, 0.3], "optimizers.joint-ngd.lr": [0.1, 0.3]},
}


def test_points_are_the_product_with_zip_as_one_axis_and_readable_names():
    points = sweep_grid.points(GRID)
    assert list(points) == ["d~8_lr~0.1", "d~8_lr~0.3", "d~12_lr~0.1", "d~12_lr~0.3"]
    assert points["d~12_lr~0.3"] == {
        "train.iterations": 100,
        "data.params.d": 12,
        "optimizers.ngd.lr": 0.3,
        "optimizers.joint-ngd.lr": 0.3,
    }


def test_labels_grow_until_they_tell_keys_apart():
    grid = {"optimizers.gd.lr": [1.0, 2.0], "optimizers.ngd.lr": [0.1, 1e10]}
    assert list(sweep_grid.points(grid))[-1] == "gd.lr~2_ngd.lr~1e+10"


def test_two_values_with_one_name_are_refused():
    with pytest.raises(sweep_grid.GridError, match="two points have the name"):
        sweep_grid.points({"optimizers.ngd.lr": [0.1, 0.1000000001]})


def test_a_point_is_the_base_with_its_values_without_texts():
    base = tiny()["experiments"]["fig3"]
    values = sweep_grid.points(GRID)["d~12_lr~0.3"]
    point = sweep_grid.point_experiment({"seeds": 1}, base, values)
    assert point["data"]["params"]["d"] == 12 and point["optimizers"]["ngd"]["lr"] == 0.3
    assert point["seeds"] == 1 and "title" not in point
    assert all("label" not in opt for opt in point["optimizers"].values())
    assert base["data"]["params"]["d"] == 12 and base["optimizers"]["ngd"]["lr"] == 0.1


# ---- metrics ------------------------------------------------------------------------------


def runs_with(table: dict, iterations) -> sweep_metrics.Runs:
    rows = len(next(iter(table.values())))
    return sweep_metrics.Runs("x", np.asarray(iterations), table, [{}] * rows, [{}] * rows)


@pytest.mark.parametrize("power", [1.0, 2.0])
def test_the_fitted_rate_is_the_power_of_a_power_law(power):
    t = np.unique(np.geomspace(1, 1e4, 40).astype(int))
    gaps = np.stack([0.5 * t**-power, 3.0 * t**-power])
    rate = sweep_metrics.compute(["rate_W"], runs_with({"gap_W": gaps}, t))["rate_W"]
    np.testing.assert_allclose(rate, -power, rtol=1e-9)


def test_a_threshold_never_crossed_is_infinitely_late():
    table = {"first_gap_W_below_0.01": np.array([[12.0], [np.nan]])}
    values = sweep_metrics.compute(["first_W_below_1e-2"], runs_with(table, [0, 10]))
    assert list(values["first_W_below_1e-2"]) == [12.0, np.inf]


def test_the_support_fraction_metric_counts_the_samples_at_margin_one():
    # u-SVM of x_opt = e_1 (y = +1) and -2 e_1 (y = -1): u_mm = e_1, margins 1 and 2, so one
    # sample of two is a support vector
    X = np.array([[[1.0, 0.0], [0.0, 0.3]], [[0.0, 0.3], [-2.0, 0.0]]])
    data = {"X": X, "y": np.array([1.0, -1.0]), "opt": np.array([0, 1])}
    runs = sweep_metrics.Runs("x", np.array([0]), {}, [data], [{"u_mm": np.array([1.0, 0.0])}])
    value = sweep_metrics.compute(["non_support_fraction"], runs)["non_support_fraction"]
    assert list(value) == [0.5]
    u_mm = max_margin.solve_u_svm(X, data["y"], data["opt"]).solution  # our solver finds it too
    np.testing.assert_allclose(u_mm, [1.0, 0.0], atol=1e-9)
    # control: with the second sample at margin 1 too, both are support vectors
    X[1, 1, 0] = -1.0
    assert sweep_metrics.compute(["non_support_fraction"], runs)["non_support_fraction"] == 0


def test_the_loss_ratio_growth_is_the_late_maximum_over_the_early_one():
    t = np.arange(0, 101, 10)
    bounded = np.where(t <= 10, 2.0, 1.5)  # falls after t_last / 10: no growth
    growing = 0.05 * t  # early maximum 0.5 (t = 10), late 5
    table = {"log_loss_ratio": np.stack([bounded, growing])}
    growth = sweep_metrics.compute(["loss_ratio_growth"], runs_with(table, t))
    np.testing.assert_allclose(growth["loss_ratio_growth"], [0.0, 4.5])


def test_a_registered_metric_is_one_function_and_one_line(monkeypatch):
    monkeypatch.setattr(sweep_metrics, "METRICS", dict(sweep_metrics.METRICS))

    @sweep_metrics.metric("samples", "samples per seed")
    def _samples(runs):
        return np.array([len(ds["y"]) for ds in runs.datasets], dtype=float)

    runs = sweep_metrics.Runs("x", np.array([0]), {}, [{"y": [1, -1]}, {"y": [1]}], [{}, {}])
    assert list(sweep_metrics.compute(["samples"], runs)["samples"]) == [2.0, 1.0]
    with pytest.raises(ValueError, match="registered twice"):
        sweep_metrics.metric("samples", "again")(_samples)


# ---- claims -------------------------------------------------------------------------------


def point(values: dict[str, list[float]], metric="m", aggregate="mean", curves=None):
    """A Point with one metric: optimizer -> its seeds' values."""
    per_seed = pd.DataFrame({(metric, o): v for o, v in values.items()})
    per_seed.columns = pd.MultiIndex.from_tuples(per_seed.columns)
    summary = getattr(per_seed, aggregate)().to_frame().T
    return sweep_claims.Point(per_seed, summary, curves if curves is not None else pd.DataFrame())


ORDERED = {"gd": [3.0, 3.5], "ngd": [1.0, 1.2], "ps": [0.5, 0.6]}


@pytest.mark.parametrize(
    "spec, holds",
    [
        ({"claim": "fastest", "optimizer": "ps", "metric": "m"}, (True, 2)),
        ({"claim": "fastest", "optimizer": "ngd", "metric": "m"}, (False, 0)),
        ({"claim": "slowest", "optimizer": "gd", "metric": "m"}, (True, 2)),
        ({"claim": "slowest", "optimizer": "ps", "metric": "m"}, (False, 0)),
        ({"claim": "ahead", "a": "ngd", "b": "gd", "metric": "m"}, (True, 2)),
        ({"claim": "ahead", "a": "gd", "b": "ngd", "metric": "m"}, (False, 0)),
        ({"claim": "close", "a": "ngd", "b": "ps", "metric": "m", "factor": 2.0}, (True, 2)),
        ({"claim": "close", "a": "gd", "b": "ps", "metric": "m", "factor": 2.0}, (False, 0)),
        ({"claim": "reaches", "optimizer": "ngd", "metric": "m", "threshold": 1.1}, (True, 1)),
        ({"claim": "reaches", "optimizer": "gd", "metric": "m", "threshold": 1.1}, (False, 0)),
    ],
)
def test_claims_follow_the_numbers(spec, holds):
    assert sweep_claims.judge(point(ORDERED), spec) == holds


def test_a_diverged_run_breaks_every_comparison_with_it():
    numbers = point({"gd": [3.0], "ngd": [np.nan], "ps": [0.5]})
    assert sweep_claims.judge(numbers, {"claim": "fastest", "optimizer": "ps", "metric": "m"}) == (
        False,
        0,
    )


def test_below_throughout_reads_every_logged_t_after_the_burn_in():
    t = [0, 10, 100, 1000]
    rows = []
    for seed, late_cross in ((0, False), (1, True)):
        for i, step in enumerate(t):
            rows.append({"optimizer": "a", "seed": seed, "t": step, "gap_W": 1.0 / (i + 2)})
            b = 1.0 / (i + 1) if not (late_cross and step == 1000) else 0.01
            rows.append({"optimizer": "b", "seed": seed, "t": step, "gap_W": b})
    curves = pd.DataFrame(rows)
    numbers = point({"a": [1.0, 1.0], "b": [1.0, 1.0]}, curves=curves)
    spec = {"claim": "below_throughout", "a": "a", "b": "b", "series": "gap_W"}
    assert sweep_claims.judge(numbers, {**spec, "burn_in": 10}) == (False, 1)
    early = curves[curves["t"] < 1000]
    numbers = point({"a": [1.0, 1.0], "b": [1.0, 1.0]}, curves=early)
    assert sweep_claims.judge(numbers, {**spec, "burn_in": 10}) == (True, 2)


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


# ---- the config's refusals ------------------------------------------------------------------


checked = checked_config


def with_sweep(change) -> dict:
    config = tiny()
    change(config["sweeps"]["fig3"])
    return config


def test_the_tiny_sweep_passes():
    checked(tiny())


@pytest.mark.parametrize(
    "change, key, words",
    [
        (
            lambda s: s["grid"].update({"optimizers.ngd.max_stepp": [1.0]}),
            "sweeps.fig3.grid.optimizers.ngd.max_stepp",
            "unknown key path",
        ),
        (
            lambda s: s["grid"].update({"optimizers.ngd.max_step": [1.0]}),
            "sweeps.fig3.grid.optimizers.ngd.max_step",
            "base experiment has no key 'max_step'",
        ),
        (lambda s: s.update(grid={}), "sweeps.fig3.grid", "the grid is empty"),
        (
            lambda s: s["grid"].update({"data.params.d": []}),
            "sweeps.fig3.grid.data.params.d",
            "should be non-empty",
        ),
        (
            lambda s: s["grid"].update(
                {"data.params.d": list(range(1, 400)), "data.params.n": list(range(1, 400))}
            ),
            "sweeps.fig3.grid",
            "exceed the limit of 100000",
        ),
        (
            lambda s: s["grid"].update({"data.params.d": [12, -1]}),
            "sweeps.fig3.grid.data.params.d",
            "value (-1,)",
        ),
        (
            lambda s: s["grid"]["zip"].update({"optimizers.joint-ngd.lr": [0.1]}),
            "sweeps.fig3.grid.zip",
            "one length",
        ),
        (lambda s: s.update(base="fig33"), "sweeps.fig3.base", "not an experiment"),
        (  # the trial's case: Snakemake's PeriodicWildcardError, naming no key, before
            lambda s: s["grid"].update({"optimizers.gd.label": ["GD", "x" + "ab" * 20]}),
            "sweeps.fig3.grid.optimizers.gd.label[1]",
            "which ends in 'ab' repeated: Snakemake refuses such a file name",
        ),
        (
            lambda s: s["grid"].update(
                {"zip": {"optimizers.gd.label": ["GD", "=" * 30], "optimizers.gd.lr": [1, 2]}}
            ),
            "sweeps.fig3.grid.zip.optimizers.gd.label[1]",
            "PeriodicWildcardError",
        ),
        (
            lambda s: s["grid"].update({"optimizers.gd.label": ["GD", "G/D"]}),
            "sweeps.fig3.grid.optimizers.gd.label[1]",
            "value 'G/D' holds '/', so it cannot be part of a point's file names",
        ),
        (
            lambda s: s["grid"].update({"optimizers.gd.label": ["GD", ".."]}),
            "sweeps.fig3.grid.optimizers.gd.label[1]",
            "is empty or only dots",
        ),
        (
            lambda s: s.update(optimizers=["gd", "adam"]),
            "sweeps.fig3.optimizers[1]",
            "'adam' is no optimizer of the base",
        ),
        (
            lambda s: s.update(optimizers=["gd", "ngd"]),  # its grid sets joint-ngd's lr
            "sweeps.fig3.grid.zip.optimizers.joint-ngd.lr",
            "has no key 'joint-ngd' under optimizers",
        ),
        (lambda s: s["metrics"].append("final_gap"), "sweeps.fig3.metrics[2]", "unknown metric"),
        (
            lambda s: s["claims"].update(x={"claim": "fastest-ish"}),
            "sweeps.fig3.claims.x.claim",
            "unknown claim",
        ),
        (
            lambda s: s["claims"].update(x={"claim": "fastest", "optimizer": "ps"}),
            "sweeps.fig3.claims.x",
            "missing ['metric']",
        ),
        (
            lambda s: s["claims"].update(
                x={"claim": "fastest", "optimizer": "adam", "metric": "final_log_loss"}
            ),
            "sweeps.fig3.claims.x.optimizer",
            "no optimizer of the base",
        ),
    ],
)
def test_a_bad_sweep_is_refused_naming_its_key(change, key, words):
    with pytest.raises(configkeys.ConfigError) as err:
        checked(with_sweep(change))
    assert err.value.key == key, str(err.value)
    assert words in str(err.value)


@pytest.mark.parametrize(
    "name",
    ["d~12_label~" + "ab" * 20, "x" + "ab" * 19, "lr~1e-" + "0" * 19, "n~" + "1" * 25, "d~12"],
)
def test_the_periodic_name_check_is_snakemakes(name):
    from snakemake.io import PeriodicityDetector

    assert bool(sweep_grid.PERIODIC.search(name)) == bool(PeriodicityDetector().is_periodic(name))


# ---- the workflow's plan ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("sweep"))


def write(project: Path, config: dict, name: str = "case.yaml") -> str:
    path = project / "config" / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return f"config/{name}"


def test_one_job_per_point_one_summary_and_none_in_rule_all(project):
    points = len(SweepConfig(tiny()).points("fig3"))
    config = write(project, tiny())
    plan = planned_jobs(project, config=config, target=SWEEP_TARGET)
    assert plan == {"sweep_point": points, "sweep_summary": 1}
    alias = planned_jobs(project, config=config, target="results-tiny/fig3_sweep.pdf")
    assert alias == {"sweep_point": points, "sweep_summary": 1, "fig3_sweep": 1}
    assert "sweep_point" not in planned_jobs(project, config=config)


def test_a_bad_sweep_fails_before_any_job(project):
    config = with_sweep(lambda s: s["grid"].update({"optimizers.ngd.max_stepp": [1.0]}))
    result = snakemake(project, "-n", SWEEP_TARGET, config=write(project, config), check=False)
    assert result.returncode != 0
    assert "sweeps.fig3.grid.optimizers.ngd.max_stepp" in result.stdout + result.stderr


@pytest.mark.slow
def test_a_new_point_builds_alone_and_a_base_change_reruns_what_it_changes(project):
    """Build the tiny sweep, then plan: a new d builds its two points only; the base's ngd lr
    (swept, so no point reads it) reruns nothing; the base's n reruns every point."""
    snakemake(project, "-c1", SWEEP_TARGET, config=write(project, tiny(), "sweep.yaml"))
    points = len(SweepConfig(tiny()).points("fig3"))
    assert planned_jobs(project, config="config/sweep.yaml", target=SWEEP_TARGET) == {}

    def plan(change) -> dict:
        config = tiny()
        change(config)
        # edited in place: results-tiny belongs to config/sweep.yaml now (one owner)
        return planned_jobs(
            project, config=write(project, config, "sweep.yaml"), target=SWEEP_TARGET
        )

    added = plan(lambda c: c["sweeps"]["fig3"]["grid"]["data.params.d"].append(20))
    assert added == {"sweep_point": 2, "sweep_summary": 1}
    relabel = plan(lambda c: c["experiments"]["fig3"]["optimizers"]["ngd"].update(label="N"))
    assert relabel.get("sweep_point", 0) == 0
    swept = plan(lambda c: c["experiments"]["fig3"]["optimizers"]["ngd"].update(lr=0.5))
    assert swept.get("sweep_point", 0) == 0
    base = plan(lambda c: c["experiments"]["fig3"]["data"]["params"].update(n=5))
    assert base == {"sweep_point": points, "sweep_summary": 1}
    gd = plan(lambda c: c["experiments"]["fig3"]["optimizers"]["gd"].update(lr=0.5))
    assert gd == {"sweep_point": points, "sweep_summary": 1}

    # a point's file copied over another's: the summary refuses it by path
    config = write(project, tiny(), "sweep.yaml")
    names = list(SweepConfig(tiny()).points("fig3"))
    folder = project / "results-tiny/sweeps/fig3/points"
    (folder / f"{names[1]}.parquet").write_bytes((folder / f"{names[0]}.parquet").read_bytes())
    result = snakemake(
        project, "-c1", SWEEP_TARGET, "--forcerun", SWEEP_TARGET, "--rerun-triggers", "mtime",
        config=config, check=False,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"points/{names[1]}.parquet holds kind sweep point, experiment fig3, setting" in out


def test_a_point_file_of_another_point_is_refused_by_path(tmp_path):
    """The trial's case: a point's file copied over another's (pandas' "Index contains
    duplicate entries" in the summary before): each point file records its sweep, point
    and the sha256 of its experiment, and the summary reads it against its path's."""
    import pyarrow as pa

    sweeps = SweepConfig(tiny())
    first, second = list(sweeps.points("fig3"))[:2]
    identities = sweeps.identities("fig3")
    assert identities[first] != identities[second]
    table = pa.Table.from_pandas(pd.DataFrame({"point": [first], "x": [1.0]}))
    path = tmp_path / f"{second}.parquet"  # the first point's file, at the second's path
    parquet.save_table(path, parquet.with_identity(table, identities[first]))
    assert parquet.load_frame(tmp_path / f"{second}.parquet", identities[first]) is not None
    with pytest.raises(store.FileContractError) as err:
        parquet.load_frame(path, identities[Path(path).stem])
    message = str(err.value)
    assert message.startswith(f"{path} holds kind sweep point, experiment fig3, setting {first}")
    assert f"setting {second}" in message and "--forcerun" in message


def test_a_null_grid_value_keeps_its_name_in_the_figure():
    """A table holds the grid's null (uncapped) as NaN; the figure finds its point by name."""
    column = pd.Series([1.0e4, np.nan, [0, 1]], dtype=object)
    assert list(sweep_figure._formatted(column)) == [
        sweep_grid.format_value(1.0e4),
        sweep_grid.format_value(None),
        sweep_grid.format_value([0, 1]),
    ]
    assert sweep_grid.format_value(None) != sweep_grid.format_value(float("nan"))


def test_a_sweep_trains_the_optimizers_it_names_in_its_order():
    base = {"optimizers": {"gd": {"rule": "gd"}, "ngd": {"rule": "ngd"}, "ps": {"rule": "polyak"}}}
    point = sweep_grid.point_experiment({"optimizers": ["ps", "gd"]}, base, {})
    assert list(point["optimizers"]) == ["ps", "gd"]
    assert list(sweep_grid.point_experiment({}, base, {})["optimizers"]) == ["gd", "ngd", "ps"]
