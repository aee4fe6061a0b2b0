"""End-to-end: the real Snakemake workflow on config/tiny.yaml, in a temporary copy."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from project import copy_project, planned_jobs, snakemake

from attnbias.data import hypotheses
from attnbias.workflow import npz, parquet

FIGURES = ("fig2", "fig3", "fig8", "gd_vs_ngd", "fig9")


@pytest.fixture(scope="module")
def built(built_project) -> Path:
    return built_project  # conftest.py: built once per session, shared with test_report.py


def edited(path: Path, text: str):
    """Append `text` to `path` for the duration of a with-block, then restore it and its mtime."""

    class Edit:
        def __enter__(self):
            self.original = path.read_text()
            self.stat = path.stat()
            path.write_text(self.original + text)  # now newer than every output

        def __exit__(self, *exc):
            path.write_text(self.original)
            os.utime(path, (self.stat.st_atime, self.stat.st_mtime))

    return Edit()


def test_every_figure_is_built_with_its_png_twin(built):
    for name in FIGURES:
        assert (built / "results-tiny" / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert (built / "results-tiny" / f"{name}.png").read_bytes().startswith(b"\x89PNG")


def test_every_synthetic_job_holds_blas_to_its_threads(built):
    """Snakemake sets OMP_NUM_THREADS and the like to a job's threads (config `threads`:
    1 here); each job's log records what it saw (attnbias.workflow.joblog)."""
    logs = [
        *(built / "results-tiny/logs/data").glob("*.log"),
        *(built / "results-tiny/logs/svm").glob("*.log"),
        *(built / "results-tiny/logs/train").glob("*/*.log"),
    ]
    assert len(logs) > 10
    for log in logs:
        first = log.read_text().splitlines()[0]
        assert (
            first == "threads: 1 (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, MKL_NUM_THREADS=1)"
        ), (
            log,
            first,
        )


def test_file_contract(built):
    config = yaml.safe_load((built / "config/tiny.yaml").read_text())["experiments"]
    for name, experiment in config.items():
        seeds = range(experiment["seeds"])
        table = pq.read_table(built / "results-tiny" / name / "metrics.parquet").to_pandas()
        assert list(table.columns) == [
            "experiment",
            "optimizer",
            "seed",
            "iteration",
            "metric",
            "value",
        ]
        assert set(table["optimizer"]) == set(experiment["optimizers"])
        assert set(table["seed"]) == set(seeds)
        assert table["value"].notna().all()
        metrics = set(table["metric"])
        assert {
            "loss",
            "log_loss",
            "W_norm",
            "u_norm",
            "opt_softmax",
            "log1m_opt_softmax",
            "alignment_W",
            "gap_W",
        } <= metrics
        if experiment["train"].get("train_u"):
            assert {"alignment_u", "gap_u"} <= metrics
        data_path = built / f"results-tiny/data/{name}.npz"
        svm_path = built / f"results-tiny/svm/{name}.npz"
        datasets, solutions = npz.load_data(data_path), npz.load_seeds(svm_path)
        assert list(datasets) == list(solutions) == list(seeds)
        stored = npz.hypotheses_by_seed(data_path, svm_path)
        finals = {
            opt: npz.load_seeds(built / f"results-tiny/train/{name}/{opt}.final.npz")
            for opt in experiment["optimizers"]
        }
        for seed in seeds:
            data, svm = datasets[seed], solutions[seed]
            n, T, d = data["X"].shape
            assert data["y"].shape == (n,) and data["opt"].shape == (n,)
            assert data["W0"].shape == (d, d)
            assert ("u" in data) != bool(experiment["train"].get("train_u"))
            assert svm["W_mm"].shape == (d, d) and svm["W_mm_kkt_residual"] < 1e-8
            assert ("u_mm" in svm) == bool(experiment["train"].get("train_u"))
            # the hypotheses the data and svm jobs stored, as measured on their arrays
            measured = hypotheses.report(data, svm)
            assert list(stored[seed].items()) == list(measured.items())
            for opt in experiment["optimizers"]:
                final = finals[opt][seed]
                assert final["W"].shape == (d, d) and final["u"].shape == (d,)
        # one training table per optimizer, every seed in it
        for opt in experiment["optimizers"]:
            run = parquet.read_table(built / f"results-tiny/train/{name}/{opt}.parquet")
            assert sorted(set(run.column("seed").to_pylist())) == list(seeds)


def test_nothing_to_do_after_a_full_build(built):
    assert planned_jobs(built) == Counter()


@pytest.mark.slow
def test_optimizer_change_reruns_training_aggregation_and_figures_only(built):
    with edited(built / "src/attnbias/optim/full_batch.py", "\n# a change\n"):
        plan = planned_jobs(built)
    assert plan == Counter(train=13, aggregate=5, figure=5, claims=1, all=1)
    assert planned_jobs(built) == Counter()


@pytest.mark.slow
def test_a_rule_change_reruns_the_jobs_that_train_with_it_only(built):
    """The registry runs every rule module, but a job depends on the rules it trains with
    (codedeps.rule_files): the Polyak step's module reruns PS's runs (fig2's and fig3's)
    and what reads their tables; a new module no config line uses, and a real-data rule's,
    rerun nothing of the synthetic build."""
    rules = built / "src/attnbias/optim/rules"
    with edited(rules / "polyak.py", "\n# a change\n"):
        assert planned_jobs(built) == Counter(train=2, aggregate=2, figure=2, claims=1, all=1)
    with edited(rules / "sgd.py", "\n# a change\n"):
        assert planned_jobs(built) == Counter()
    new = rules / "gd_copy.py"
    new.write_text((rules / "gd.py").read_text().replace('name="gd"', 'name="gd-copy"'))
    try:
        assert planned_jobs(built) == Counter()
    finally:
        new.unlink()
    assert planned_jobs(built) == Counter()


@pytest.mark.slow
def test_plotting_change_reruns_figures_only(built):
    with edited(built / "src/attnbias/figures/lines.py", "\n# a change\n"):
        assert planned_jobs(built) == Counter(figure=5, all=1)


@pytest.mark.slow
def test_svm_change_reruns_from_the_svm_stage(built):
    # of the data jobs, only the bad_direction model's (tiny fig8) solve an SVM
    with edited(built / "src/attnbias/svm/max_margin.py", "\n# a change\n"):
        assert planned_jobs(built) == Counter(
            data=1, svm=5, train=13, aggregate=5, figure=5, claims=1, all=1
        )


def test_only_the_bad_direction_data_depends_on_the_svm_module():
    """The data rule's code (JobParams.data_generator_code): the SVM module only for
    bad_direction's jobs."""
    from attnbias.data.models import SEPARATE_GENERATORS
    from attnbias.workflow.codedeps import module_files, package_module_files

    script = Path(__file__).parents[2] / "workflow/scripts/data.py"
    assert not [f for f in module_files(str(script)) if "/svm/" in f]
    own = package_module_files(SEPARATE_GENERATORS["bad_direction"])
    assert [
        f.split("attnbias/")[1] for f in own if f.endswith(("/max_margin.py", "/bad_direction.py"))
    ] == [
        "data/bad_direction.py",
        "svm/max_margin.py",
    ]


@pytest.mark.parametrize(
    "script", ["figure.py", "figure_real.py", "figure_similarity.py", "geometry_figure.py"]
)
def test_a_claims_change_reruns_no_figure(script):
    """The figure scripts import nothing of the claims package (the algorithm key is
    the spec's, optim.spec, the reference anchor figures.panels'), so an edit to a claims module
    reruns the claims job alone."""
    from attnbias.workflow.codedeps import module_files

    path = Path(__file__).parents[2] / "workflow/scripts" / script
    assert [f for f in module_files(str(path)) if "/attnbias/claims/" in f] == []


@contextmanager
def _with_config(built: Path, change):
    """config/tiny.yaml changed in place (the build's own config: a copy at another path may
    not write into its results folder), restored afterwards."""
    path = built / "config" / "tiny.yaml"
    original = path.read_text()
    config = yaml.safe_load(original)
    change(config["experiments"])
    # optimizer order is legend order (it may redraw a figure); keep the file's order
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        yield "config/tiny.yaml"
    finally:
        path.write_text(original)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda e: e["fig2"]["optimizers"]["ngd"].update(lr=0.2),
            Counter(train=1, aggregate=1, figure=1, claims=1, all=1),
        ),
        (
            lambda e: e["fig3"]["train"].update(iterations=301),
            Counter(train=4, aggregate=1, figure=1, claims=1, all=1),
        ),
        (
            lambda e: e["fig2"]["data"]["params"].update(d=13),
            Counter(data=1, svm=1, train=4, aggregate=1, figure=1, claims=1, all=1),
        ),
        (
            # fig2's jobs, one per stage and optimizer, make all three seeds again
            lambda e: e["fig2"].update(seeds=3),
            Counter(data=1, svm=1, train=4, aggregate=1, figure=1, claims=1, all=1),
        ),
        (lambda e: e["fig8"].update(title="another title"), Counter(figure=1, all=1)),
        (  # the claims table shows the legend's labels too
            lambda e: e["gd_vs_ngd"]["optimizers"]["gd"].update(label="plain GD"),
            Counter(figure=1, claims=1, all=1),
        ),
        (  # the figure the claims cite: no figure, run or sweep reads it
            lambda e: e["fig9"].update(paper_figure="Fig. 4"),
            Counter(claims=1, all=1),
        ),
    ],
    ids=[
        "optimizer-lr",
        "iterations",
        "data-size",
        "one-more-seed",
        "title",
        "label",
        "paper-figure",
    ],
)
def test_config_change_reruns_exactly_what_depends_on_it(built, change, expected):
    with _with_config(built, change) as config:
        assert planned_jobs(built, config) == expected


@pytest.mark.slow
def test_training_is_deterministic(built):
    target = "results-tiny/train/fig3/ps.parquet"
    before = pq.read_table(built / target)
    snakemake(built, "-c1", "-q", "--forcerun", target, "--until", target)
    assert pq.read_table(built / target).equals(before)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda c: c["experiments"]["fig2"]["optimizers"]["ngd"].update(learning_rate=1),
            "learning_rate",
        ),
        (lambda c: c["experiments"]["fig2"]["optimizers"]["ngd"].update(lr=-1), "lr"),
        (
            lambda c: c["experiments"]["fig3"]["data"]["params"].update(query_signal=1),
            "query_signal",
        ),
        (lambda c: c.update(device="gpu"), "device"),
        (
            lambda c: c["experiments"]["fig3"]["optimizers"]["ps"].update(f_star="opt"),
            "experiments.fig3.optimizers.ps",
        ),
    ],
    ids=["unknown-key", "negative-lr", "key-of-another-model", "device", "polyak-f-star"],
)
def test_bad_config_fails_before_any_job_naming_the_key(tmp_path, change, message):
    workdir = copy_project(tmp_path)
    config = yaml.safe_load((workdir / "config/tiny.yaml").read_text())
    change(config)
    (workdir / "config/bad.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(workdir, "-c1", config="config/bad.yaml", check=False)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (workdir / "results-tiny").exists()


@pytest.mark.slow
def test_infeasible_svm_stops_with_a_message_and_keeps_what_was_built(tmp_path):
    workdir = copy_project(tmp_path)
    config = {
        "experiments": {
            "tight": {
                "layout": "fixed_decoder",
                "seeds": 1,
                "data": {
                    "model": "example1",
                    "params": {"n": 40, "T": 4, "d": 1, "noise_orthogonal_to_u": False},
                },
                "train": {"iterations": 10},
                "optimizers": {"gd": {"rule": "gd"}},
            }
        }
    }
    (workdir / "config/tight.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(workdir, "-c1", config="config/tight.yaml", check=False)
    assert result.returncode != 0
    log = result.stdout + result.stderr
    assert "W-SVM for experiment tight, seed 0 is infeasible (n=40, T=4, d=1" in log
    assert (workdir / "results/data/tight.npz").exists()
    assert not (workdir / "results/svm/tight.npz").exists()


# config/tiny.yaml names no robustness constant: one on fig2's GD lr, in the default build
ROBUSTNESS = {
    "default_build": True,
    "constants": {
        "gd_lr": {
            "label": "GD's lr",
            "set": {"fig2": "optimizers.gd.lr"},
            "values": [0.5, 1.0],
            "plausible": [0.5, 1.0],
            "why": "the end-to-end test",
        }
    },
}


@pytest.mark.slow
def test_a_constant_of_the_default_build_is_measured_without_the_others(built):
    """A constant's own default_build (as fig2's caps): its points and the partial summary
    are of the default build, the claims read them and name the constants left unmeasured."""
    results = built / "results-tiny"
    path = built / "config" / "tiny.yaml"
    original = path.read_text()
    left = planned_jobs(built) + Counter(all=1)
    gd_lr = {**ROBUSTNESS["constants"]["gd_lr"], "default_build": True}
    other = {**ROBUSTNESS["constants"]["gd_lr"], "label": "GD's lr again"}
    section = {"default_build": False, "constants": {"gd_lr": gd_lr, "other": other}}
    path.write_text(original + yaml.safe_dump({"claims_robustness": section}))
    try:
        added = Counter(claims_robustness_points=1, claims_robustness_default=1, claims=1)
        assert planned_jobs(built) - left == added  # not the other constant's points
        snakemake(built, "-c2", "-q")
        robust = pd.read_csv(results / "claims_robustness_default.csv")
        table = pd.read_csv(results / "claims.csv", keep_default_na=False).set_index("key")
        line = (results / "claims.md").read_text().splitlines()[4]
    finally:
        path.write_text(original)
    assert set(robust["constant"]) == {"gd_lr"} and len(robust)
    for key, row in robust.set_index("key").iterrows():
        assert table.loc[key, "robustness"].startswith(f"GD's lr = 1 (ours): {row['range']}")
    assert line.startswith("**Measured in this build for the constants of the default build")
    assert "the constants other not measured: build results/claims_robustness.md" in line
    assert not (results / "claims_robustness.md").exists()
    # the build as it was (the tests share it): without the section the claims job reruns
    shutil.rmtree(results / "claims_robustness")
    for suffix in ("parquet", "csv", "md"):
        (results / f"claims_robustness_default.{suffix}").unlink()
    assert planned_jobs(built) == Counter(claims=1, all=1)
    snakemake(built, "-c2", "-q")


@pytest.mark.slow
def test_claims_robustness_is_built_and_read_by_the_claims(built):
    results = built / "results-tiny"
    path = built / "config" / "tiny.yaml"
    original = path.read_text()
    left = planned_jobs(built) + Counter(all=1)  # what other tests left to do, if anything
    path.write_text(original + yaml.safe_dump({"claims_robustness": ROBUSTNESS}))
    try:
        added = Counter(claims_robustness_points=1, claims_robustness=1, claims=1)
        assert planned_jobs(built) - left == added
        snakemake(built, "-c2", "-q")
        robust = pd.read_csv(results / "claims_robustness.csv")
        table = pd.read_csv(results / "claims.csv", keep_default_na=False).set_index("key")
    finally:
        path.write_text(original)
    assert set(robust["constant"]) == {"gd_lr"} and len(robust)
    for key, row in robust.set_index("key").iterrows():
        assert table.loc[key, "robustness"].startswith(f"GD's lr = 1 (ours): {row['range']}")
    # the rows that depend on it are fig2's; the other experiments' cells are blank
    assert robust["key"].str.startswith("fig2 ").all()
    assert not table.loc[~table["experiment"].str.startswith("fig2"), "robustness"].any()
    # the header's own line under the summary line: "**N verdicts depend ...**"
    line = (results / "claims.md").read_text().splitlines()[4]
    words = "verdicts depend on constants the paper lost and we chose"
    assert line.startswith(f"**{len(robust)} {words}")
    assert (results / "claims_robustness.md").read_text().startswith("# The claims' robustness")
    # without the section again: the claims job alone reruns, and says why the column is empty
    assert planned_jobs(built) == Counter(claims=1, all=1)
    snakemake(built, "-c2", "-q")
    table = pd.read_csv(results / "claims.csv", keep_default_na=False)
    counted = table["category"].isin(["covered", "comparison", "outside"])
    assert (
        table.loc[counted, "robustness"]
        == "not measured: the config's claims_robustness names no constant"
    ).all()


def test_claims_table_is_computed_from_the_aggregate_tables(built):
    table = pd.read_csv(built / "results-tiny/claims.csv")
    assert (built / "results-tiny/claims.md").read_text().startswith("# The paper's claims")
    measured = table[table["kind"] != "not measured"]  # the registry's real-data entries
    assert set(measured["experiment"].str.split(" (", regex=False).str[0]) == set(FIGURES)
    assert {"claim", "source", "quantity", "mean", "low", "high", "reference", "holds"} <= set(
        table.columns
    )
    # recompute one row by hand from the aggregate table: PS's first passage below 1e-2
    metrics = pq.read_table(built / "results-tiny/fig2/metrics.parquet").to_pandas()
    gap = metrics[(metrics.optimizer == "ps") & (metrics.metric == "gap_W")]
    first = [g[g.value < 1e-2].iteration.min() for _, g in gap.groupby("seed")]
    row = table[table.key == "fig2 faster than gd ps 0.01"]
    assert row["claim"].item().startswith("PS: ")  # the legend's label
    assert len(row) == 1 and row["mean"].item() == pytest.approx(np.mean(first))
    assert row["low"].item() == min(first) and row["high"].item() == max(first)


@pytest.mark.slow
def test_global_convergence_study_builds_with_its_tables(built):
    snakemake(built, "results-tiny/global_convergence.pdf", "-c2", "-q")
    study = yaml.safe_load((built / "config/tiny.yaml").read_text())["global_convergence"]
    runs = pd.read_csv(built / "results-tiny/global_convergence.csv")
    summary = pd.read_csv(built / "results-tiny/global_convergence_summary.csv")
    assumptions = pd.read_csv(built / "results-tiny/global_convergence_assumptions.csv")
    pairs = len(study["settings"]) * len(study["optimizers"])
    assert len(runs) == pairs * study["inits"] and len(summary) == pairs
    assert list(assumptions["setting"]) == list(study["settings"])
    # the summary's fractions are the runs' fractions
    fractions = runs.groupby(["setting", "optimizer"])["reached"].mean()
    for row in summary.itertuples():
        assert row.fraction_reached == pytest.approx(fractions[(row.setting, row.optimizer)])
    assert (built / "results-tiny/global_convergence.pdf").read_bytes().startswith(b"%PDF")
    # correlation makes tokens less orthogonal; the score spread is what breaks Assumption 2
    by_setting = assumptions.set_index("setting")
    assert (
        by_setting.loc["corr1", "max_offdiag_inner"]
        > by_setting.loc["example1", "max_offdiag_inner"]
    )
    assert by_setting.loc["spread05", "max_noise_score_spread"] > 0
    assert by_setting.loc["example1", "max_noise_score_spread"] == 0


def test_results_are_readable_by_others(built):
    mask = os.umask(0)
    os.umask(mask)
    for path in (built / "results-tiny").rglob("*.p*"):
        assert path.stat().st_mode & 0o777 == 0o666 & ~mask, path


# A guard on sys.meta_path, loaded through a sitecustomize on PYTHONPATH: importing torch
# (or any of its modules) fails the process.
NO_TORCH = """
import sys


class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"{name} imported while parsing the workflow")


sys.meta_path.insert(0, NoTorch())
"""


def _guarded_project(tmp_path, monkeypatch):
    """A copy of the project whose Python processes fail on importing torch (NO_TORCH)."""
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_TORCH)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(guard), os.environ.get("PYTHONPATH")]))
    )
    (tmp_path / "project").mkdir()
    return copy_project(tmp_path / "project")


@pytest.mark.parametrize(
    ("config", "target"),
    [("config/config.yaml", ""), ("config/config.yaml", "real"), ("config/tiny.yaml", "")],
)
def test_parsing_the_workflow_imports_no_torch(tmp_path, monkeypatch, config, target):
    """`snakemake -n` reads the config and plans every job without torch (~2 s of import)."""
    workdir = _guarded_project(tmp_path, monkeypatch)
    result = snakemake(workdir, *([target] if target else []), "-n", config=config, check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "imported while parsing" not in out


def test_the_guard_catches_a_torch_import(tmp_path, monkeypatch):
    """The guard itself: a workflow that imports torch fails the same dry run."""
    workdir = _guarded_project(tmp_path, monkeypatch)
    common = workdir / "workflow/rules/common.smk"
    common.write_text("import torch\n" + common.read_text())
    result = snakemake(workdir, "-n", check=False)
    assert result.returncode != 0
    assert "torch imported while parsing" in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("compiler", "expected"),
    [
        (None, "attnbias: training on the compiled C kernel"),
        ("/no/such/cc", "attnbias: training on torch, many times slower"),
    ],
    ids=["kernel", "no-compiler"],
)
def test_the_console_names_the_backend_once_before_any_job(
    tmp_path, monkeypatch, compiler, expected
):
    (tmp_path / "project").mkdir()
    workdir = copy_project(tmp_path / "project")
    monkeypatch.setenv("ATTNBIAS_CACHE", str(tmp_path / "cache"))
    if compiler:
        monkeypatch.setenv("CC", compiler)
    result = snakemake(workdir, "results-tiny/data/fig2.npz", "-c1")
    console = result.stdout + result.stderr
    assert console.count("attnbias: training on") == 1, console
    assert expected in console
    if compiler:
        assert f"no C compiler ('{compiler}'" in console
