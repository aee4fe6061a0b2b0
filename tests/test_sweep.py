"""The fig3 sweep: its runs (attnbias.sweep_runs), its verdicts and tables (attnbias.sweep),
and the workflow's plan for results/fig3_sweep.pdf."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from project import copy_project, planned_jobs, snakemake

from attnbias import sweep, sweep_runs

OPTIMIZERS = {
    "gd": {"label": "GD", "rule": "gd", "lr": 1.0},
    "ngd": {"label": "NGD", "rule": "ngd", "normalize": "per_block"},
    "ps": {"label": "PS", "rule": "polyak", "f_star": 0},
    "joint-ngd": {"label": "joint-NGD", "rule": "ngd", "normalize": "global"},
}
GRID = {
    "data": {"n": 4, "T": 3},
    "separations": [{"mu_norm": 1.0, "noise_scale": 0.5}],
    "d": [8, 10],
    "lr": [0.1, 0.3],
}
SEEDS = 2
FIRST = "first_W_below_1e-2"


@pytest.fixture(scope="module")
def tiny_runs() -> pd.DataFrame:
    """A tiny sweep through the library: 2 data points x 2 step sizes = 4 settings."""
    return pd.concat(
        [
            sweep_runs.run_point(name, params, OPTIMIZERS, GRID["lr"], seeds=SEEDS, iterations=150)
            for name, params in sweep.points(GRID).items()
        ],
        ignore_index=True,
    )


# ---- the grid and the runs --------------------------------------------------------------


def test_points_are_separation_by_d_and_names_are_unique():
    points = sweep.points(GRID)
    assert list(points) == ["mu1_noise0.5_d8", "mu1_noise0.5_d10"]
    assert points["mu1_noise0.5_d10"] == {
        "n": 4,
        "T": 3,
        "d": 10,
        "mu_norm": 1.0,
        "noise_scale": 0.5,
    }
    twice = {**GRID, "separations": GRID["separations"] * 2}
    with pytest.raises(ValueError, match="appears twice"):
        sweep.points(twice)


def test_tiny_sweep_has_one_row_per_setting_optimizer_and_seed(tiny_runs):
    long, per_setting = sweep.table(tiny_runs)
    settings = [f"mu1_noise0.5_d{d}_lr{lr:g}" for d in GRID["d"] for lr in GRID["lr"]]
    assert list(per_setting["setting"]) == settings  # grid order
    assert list(per_setting["d"]) == [8, 8, 10, 10] and list(per_setting["lr"]) == GRID["lr"] * 2
    assert (per_setting["min_opt_norm_ratio"] > 1).all()
    assert len(long) == len(settings) * len(OPTIMIZERS) * SEEDS
    assert long.groupby(["setting", "optimizer", "seed"]).size().eq(1).all()
    required = {
        "setting", "mu_norm", "noise_scale", "n", "T", "d", "lr", "optimizer", "seed",
        "step_size", "gap_W", "gap_u", "log_loss", "first_W_below_1e-2", "first_W_below_1e-3",
        "opt_norm_ratio", "d_over_n", "max_offdiag_inner", "min_sq_norm", *sweep.VERDICTS,
    }  # fmt: skip
    assert required <= set(long.columns)
    assert long[["gap_W", "gap_u", "log_loss"]].notna().all().all()
    assert not long["diverged"].any()
    # the NGDs take the setting's lr; GD has its own; PS's step is adaptive
    ngds = long[long["optimizer"].isin(["ngd", "joint-ngd"])]
    assert (ngds["step_size"] == ngds["lr"]).all()
    assert (long.loc[long["optimizer"] == "gd", "step_size"] == 1.0).all()
    assert long.loc[long["optimizer"] == "ps", "step_size"].isna().all()
    # GD and PS do not depend on lr: one run, repeated under each lr; the NGDs differ
    for opt, same in [("gd", True), ("ps", True), ("ngd", False)]:
        rows = long[(long["optimizer"] == opt) & (long["d"] == 8)]
        by_lr = [rows.loc[rows["lr"] == lr, "gap_W"].to_numpy() for lr in GRID["lr"]]
        assert np.array_equal(*by_lr) == same, opt
    # the data-side quantities are the seed's, measured from its data
    assert (long["d_over_n"] == long["d"] / 4).all()
    assert (long["opt_norm_ratio"] > 1).all()  # the DM's optimal token is the longest here


def test_verdict_columns_are_the_settings_verdicts(tiny_runs):
    long, per_setting = sweep.table(tiny_runs)
    recomputed = sweep.verdicts(long)
    for name in sweep.VERDICTS:
        by_setting = long.groupby("setting")[name].agg(["min", "max"])
        assert (by_setting["min"] == by_setting["max"]).all()  # one value per setting
        expected = recomputed.set_index("setting")[name]
        assert by_setting["min"].to_dict() == expected.to_dict()
    assert sweep.tally(per_setting)["settings"].eq(len(per_setting)).all()


def test_condition_report_measures_the_opt_token_against_the_longest_other():
    X = np.zeros((2, 3, 4))
    X[0, 0, 0], X[1, 0, 1] = 3.0, 2.0  # opt norms 3 and 2
    X[0, 1, 2], X[1, 2, 3] = 0.5, 1.0  # the longest other token: 1
    report = sweep_runs.condition_report({"X": X, "opt": np.zeros(2, dtype=int)})
    assert report["opt_norm_ratio"] == pytest.approx(2.0)
    assert report["d_over_n"] == 2.0
    assert report["min_sq_norm"] == 0.0 and report["max_offdiag_inner"] == 0.0


def test_an_ngd_with_its_own_lr_is_rejected():
    params = sweep.points(GRID)["mu1_noise0.5_d8"]
    bad = {**OPTIMIZERS, "ngd": {**OPTIMIZERS["ngd"], "lr": 0.1}}
    with pytest.raises(ValueError, match="takes its lr from the sweep"):
        sweep_runs.run_point("x", params, bad, [0.1], seeds=1, iterations=2)


@pytest.mark.parametrize("dtype", ["float64", "float32"])  # the C kernel, torch
def test_a_diverged_seed_gets_nan_and_the_others_keep_their_numbers(monkeypatch, dtype):
    params = sweep.points(GRID)["mu1_noise0.5_d8"]
    ps_only = {"ps": OPTIMIZERS["ps"]}
    point = dict(seeds=2, iterations=20, dtype=dtype)
    clean = sweep_runs.run_point("x", params, ps_only, [0.1], **point)
    second = sweep_runs.data.generate("dm", 1, params)["X"][0, 0, 0]

    def is_second(X) -> bool:  # X (B, n, T, d), numpy or torch
        return bool(np.isclose(float(X[-1, 0, 0, 0]), float(second), rtol=1e-6))

    if dtype == "float64":  # fast.train sets a diverged run to NaN and keeps the others
        real = sweep_runs.fast.train

        def train(problem, *args, **kwargs):
            table, final = real(problem, *args, **kwargs)
            if is_second(problem.X):
                for values in table.values():
                    values[-1] = np.nan
            return table, final

        monkeypatch.setattr(sweep_runs.fast, "train", train)
    else:  # train.train raises, alone or in a batch holding seed 1
        from attnbias import train as torch_train

        real = torch_train.train

        def train(problem, *args, **kwargs):
            if is_second(problem.X):
                raise FloatingPointError("diverged")
            return real(problem, *args, **kwargs)

        monkeypatch.setattr(torch_train, "train", train)
    runs = sweep_runs.run_point("x", params, ps_only, [0.1], **point)
    assert list(runs["diverged"]) == [False, True]
    assert runs.loc[1, ["gap_W", "gap_u", "log_loss"]].isna().all()
    assert runs.loc[0, "gap_W"] == clean.loc[0, "gap_W"]


def test_the_kernel_and_torch_agree_on_a_sweep_point(monkeypatch):
    params = sweep.points(GRID)["mu1_noise0.5_d8"]
    point = dict(seeds=2, iterations=150)
    kernel = sweep_runs.run_point("x", params, OPTIMIZERS, [0.1], **point)
    monkeypatch.setattr(sweep_runs.fast, "backend", lambda device, dtype: "torch")
    reference = sweep_runs.run_point("x", params, OPTIMIZERS, [0.1], **point)
    assert kernel[["optimizer", "seed"]].equals(reference[["optimizer", "seed"]])
    for column in sweep_runs.RUN_COLUMNS:
        np.testing.assert_allclose(
            kernel[column].astype(float), reference[column].astype(float), rtol=1e-7, err_msg=column
        )


# ---- the verdicts follow the numbers ----------------------------------------------------


def crafted(changes=None) -> pd.DataFrame:
    """One setting, two seeds, where every part of the paper's order holds; `changes` maps
    (optimizer, column) -> value for both seeds."""
    values = {
        "gd": {"gap_W": 1e-1, "gap_u": 1e-2, "log_loss": -8.0, FIRST: np.nan},
        "ngd": {"gap_W": 1e-3, "gap_u": 1e-4, "log_loss": -500.0, FIRST: 300.0},
        "ps": {"gap_W": 1e-4, "gap_u": 1e-6, "log_loss": -5000.0, FIRST: 40.0},
        "joint-ngd": {"gap_W": 1e-2, "gap_u": 2e-4, "log_loss": -450.0, FIRST: 900.0},
    }
    for (opt, column), value in (changes or {}).items():
        values[opt][column] = value
    rows = [
        {"setting": "s", "seed": seed, "optimizer": opt, **metrics}
        for opt, metrics in values.items()
        for seed in range(2)
    ]
    return pd.DataFrame(rows)


def verdict(frame, tolerance=2.0) -> dict:
    row = sweep.verdicts(frame, tolerance).iloc[0]
    return {name: bool(row[name]) for name in sweep.VERDICTS}


ALL_HOLD = dict.fromkeys(sweep.VERDICTS, True)


def test_the_paper_order_holds_on_numbers_that_follow_it():
    assert verdict(crafted()) == ALL_HOLD
    row = sweep.verdicts(crafted()).iloc[0]
    assert row["ps_fastest_W_seeds"] == 2 and row["seeds"] == 2
    assert row["log10_gap_W_gd"] == pytest.approx(-1.0)
    assert row["loss_ratio_ngd_joint"] == pytest.approx(500 / 450)


@pytest.mark.parametrize(
    ("changes", "fails"),
    [
        ({("ps", "gap_W"): 1e-2}, ["ps_fastest_W"]),  # PS behind NGD in W (what we measured)
        ({("ps", "gap_W"): 1e-3}, ["ps_fastest_W"]),  # a tie is no order
        ({("ngd", "gap_u"): 1e-1}, ["gd_slowest_u", "ngd_ahead_u"]),
        ({("gd", "log_loss"): -6000.0}, ["gd_slowest_loss", "ps_fastest_loss"]),
        ({("joint-ngd", "gap_W"): 5e-4}, ["ngd_ahead_W"]),  # joint NGD ahead in W
        ({("joint-ngd", "log_loss"): -200.0}, ["ngd_joint_loss_close"]),  # 2.5x apart
        ({("gd", "gap_W"): np.nan}, ["gd_slowest_W", "ps_fastest_W"]),  # a diverged GD
    ],
)
def test_a_part_of_the_order_that_the_numbers_break_is_false(changes, fails):
    assert verdict(crafted(changes)) == {**ALL_HOLD, **dict.fromkeys(fails, False)}


def test_loss_tolerance_and_seed_counts():
    frame = crafted({("joint-ngd", "log_loss"): -200.0})
    assert verdict(frame, tolerance=3.0)["ngd_joint_loss_close"]
    # PS fastest in W on one seed only: the seed means decide, the count tells
    split = crafted()
    split.loc[(split["optimizer"] == "ps") & (split["seed"] == 1), "gap_W"] = 1e-1
    row = sweep.verdicts(split).iloc[0]
    assert row["ps_fastest_W_seeds"] == 1
    assert not row["ps_fastest_W"]  # geometric mean 10^-2.5, behind NGD
    with pytest.raises(ValueError, match="factor >= 1"):
        sweep.verdicts(crafted(), tolerance=0.5)
    with pytest.raises(ValueError, match="lack optimizer"):
        sweep.verdicts(crafted().query("optimizer != 'ps'"))


def test_the_figure_is_drawn_from_the_tables(tiny_runs, tmp_path):
    long, per_setting = sweep.table(tiny_runs)
    legend = {name: (opt["label"], "caption") for name, opt in OPTIMIZERS.items()}
    outputs = [tmp_path / "sweep.pdf", tmp_path / "sweep.png"]
    sweep.draw(long, per_setting, legend=legend, tolerance=2.0, outputs=outputs)
    assert outputs[0].read_bytes().startswith(b"%PDF")
    assert outputs[1].read_bytes().startswith(b"\x89PNG")


# ---- the workflow -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("sweep_project"))


def test_dry_run_plans_one_job_per_data_point_and_one_figure(project):
    sweep_config = yaml.safe_load((project / "config/tiny.yaml").read_text())["fig3_sweep"]
    points = len(sweep_config["separations"]) * len(sweep_config["d"])
    jobs = planned_jobs(project, target="results-tiny/fig3_sweep.pdf")
    assert jobs == {"fig3_sweep_runs": points, "fig3_sweep": 1}
    # not part of the default build
    assert "fig3_sweep_runs" not in planned_jobs(project)


def test_an_ngd_lr_in_the_sweep_config_fails_before_any_job(project, tmp_path):
    config = yaml.safe_load((project / "config/tiny.yaml").read_text())
    config["fig3_sweep"]["optimizers"]["ngd"]["lr"] = 0.1
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    result = snakemake(project, "-n", "results-tiny/fig3_sweep.pdf", config=str(path), check=False)
    assert result.returncode != 0
    assert "fig3_sweep.optimizers.ngd" in result.stdout + result.stderr
