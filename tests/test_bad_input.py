"""Bad input and faults: every refusal names its culprit (the config key or the
file), happens before a wrong result is written, and leaves what was already built as it was.

The workflow tests run the real Snakemake on the temporary copy of the project built on
config/tiny.yaml that the end-to-end tests share (`built`); each case runs on that build, or
on a copy of it where it changes files, with config/tiny.yaml changed in one key.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import shutil
import tempfile
import uuid
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import yaml
from project import copy_project, snakemake
from snakemake.report import html_reporter as snakemake_report

from attnbias.claims import measure
from attnbias.data import hypotheses, models
from attnbias.model import attention
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm import max_margin
from attnbias.training import loop, metrics
from attnbias.training.torch_loop import TorchStepper
from attnbias.workflow import (
    configcheck,
    configcheck_texts,
    configkeys,
    markdown,
    npz,
    parquet,
    store,
)
from attnbias.workflow.svm_file import load_svm

TARGET = "results-tiny/fig2/metrics.parquet"
SCHEMA = "workflow/schemas/config.schema.yaml"


def tiny() -> dict:
    return yaml.safe_load((Path(__file__).parents[1] / "config/tiny.yaml").read_text())


def snapshot(workdir: Path) -> dict:
    """Every file under results/ with its bytes' hash and mtime: what "unchanged" means."""
    return {
        str(p.relative_to(workdir)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted((workdir / "results-tiny").rglob("*"))
        if p.is_file()
    }


def run_with(workdir: Path, config: dict, *args: str, in_place: bool = False):
    """Run `config` as config/case.yaml, or (`in_place`, on a copy of the build) as the
    build's own config/tiny.yaml edited: results-tiny belongs to that file, and another
    config writing there is refused (tests/test_results_folder.py)."""
    name = "config/tiny.yaml" if in_place else "config/case.yaml"
    (workdir / name).write_text(yaml.safe_dump(config, sort_keys=False))
    return snakemake(workdir, *args, config=name, check=False)


# A copy of the build lies elsewhere: the code files that every job takes as input have
# other absolute paths there, which Snakemake's `input` trigger would take for a changed
# input set and rerun everything. Rebuilding by modification times only is what a user's
# rebuild after copying a file over another does.
BY_MTIME = ("--rerun-triggers", "mtime")


@pytest.fixture(scope="module")
def built(built_project) -> Path:
    return built_project  # conftest.py: the tiny build, shared with the end-to-end tests


@pytest.fixture
def built_copy(built, tmp_path) -> Path:
    """A copy of the build (mtimes kept, so Snakemake sees it as up to date)."""
    dest = tmp_path / "copy"
    shutil.copytree(built, dest, symlinks=True)
    return dest


# ---------------------------------------------------------------- config: refused by key

NAN, INF = float("nan"), float("inf")


def _set(*path_and_value):
    *path, value = path_and_value

    def change(c):
        target = c
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _rename(old, new):
    def change(c):
        c["experiments"][new] = c["experiments"].pop(old)

    return change


def _rename_key(path, old, new):
    def change(c):
        section = c
        for key in path:
            section = section[key]
        section[new] = section.pop(old)

    return change


REFUSED = [
    ("gd-lr-nan", _set("experiments", "fig2", "optimizers", "gd", "lr", NAN),
     "experiments.fig2.optimizers.gd.lr", "not a finite number"),
    ("ngd-max-step-nan", _set("experiments", "fig2", "optimizers", "ngd", "max_step", NAN),
     "experiments.fig2.optimizers.ngd.max_step", "not a finite number"),
    ("ps-f-star-nan", _set("experiments", "fig2", "optimizers", "ps", "f_star", NAN),
     "experiments.fig2.optimizers.ps.f_star", "not a finite number"),
    ("ps-f-star-inf", _set("experiments", "fig2", "optimizers", "ps", "f_star", INF),
     "experiments.fig2.optimizers.ps.f_star", "not a finite number"),
    ("real-sgd-lr-nan", _set("real_data", "experiments", "fig1", "optimizers", "sgd", "lr", NAN),
     "real_data.experiments.fig1.optimizers.sgd.lr", "not a finite number"),
    ("study-scale-nan", _set("global_convergence", "scales", [NAN]),
     "global_convergence.scales[0]", "not a finite number"),
    ("opt-signal-nan", _set("experiments", "fig2", "data", "params", "opt_signal", NAN),
     "experiments.fig2.data.params.opt_signal", "not a finite number"),
    ("ngd-lr-inf", _set("experiments", "fig2", "optimizers", "ngd", "lr", INF),
     "experiments.fig2.optimizers.ngd.lr", "not a finite number"),
    ("seeds-too-many", _set("experiments", "fig2", "seeds", 100000),
     "experiments.fig2.seeds", "maximum of 1000"),
    ("seeds-not-whole", _set("experiments", "fig2", "seeds", 2.5),
     "experiments.fig2.seeds", "is not of type 'integer'"),
    ("d-too-large", _set("experiments", "fig2", "data", "params", "d", 100000),
     "experiments.fig2.data.params.d", "maximum of 4096"),
    ("svm-too-large", _set("experiments", "fig2", "data", "params", "n", 50000),
     "experiments.fig2.data.params.n", "exceed the limit of 10000"),
    ("gd-max-step-ignored", _set("experiments", "fig2", "optimizers", "gd", "max_step", 1e-6),
     "experiments.fig2.optimizers.gd.max_step", "rule gd ignores max_step"),
    ("polyak-lr-ignored", _set("experiments", "fig2", "optimizers", "ps", "lr", 0.5),
     "experiments.fig2.optimizers.ps.lr", "rule polyak ignores lr"),
    ("lr-u-without-u", _set("experiments", "fig2", "optimizers", "ngd", "lr_u", 0.5),
     "experiments.fig2.optimizers.ngd.lr_u", "u is not trained"),
    ("name-global-convergence", _rename("fig8", "global_convergence"),
     "experiments.global_convergence", "results-tiny/global_convergence.pdf"),
    ("name-fig10", _rename("fig8", "fig10"), "experiments.fig10", "token-similarity"),
    ("title-bad-math", _set("experiments", "fig2", "title", "loss $x^$ falls"),
     "experiments.fig2.title", "matplotlib cannot parse the math"),
    ("label-lone-dollar", _set("experiments", "fig2", "optimizers", "gd", "label", "GD $5"),
     "experiments.fig2.optimizers.gd.label", "odd number of $"),
    ("label-hidden", _set("experiments", "fig2", "optimizers", "gd", "label", "_GD"),
     "experiments.fig2.optimizers.gd.label", "hidden from the legend"),
    ("query-above-opt", _set("experiments", "fig2", "data", "params", "query_signal", 2.0),
     "experiments.fig2.data.params.query_signal", "must be below opt_signal"),
    ("renamed-figure", _rename_key(("experiments", "fig2"), "layout", "figure"),
     "experiments.fig2.figure", "renamed to layout; write `layout: fixed_decoder`"),
    ("renamed-cap", _set("experiments", "fig2", "optimizers", "ngd", "cap", 1e10),
     "experiments.fig2.optimizers.ngd.cap", "renamed to max_step"),
    ("renamed-real-name",
     _rename_key(("real_data", "experiments", "fig1", "optimizers", "sgd"), "rule", "name"),
     "real_data.experiments.fig1.optimizers.sgd.name", "renamed to rule; write `rule: sgd`"),
    ("real-setting-of-another-rule",
     _set("real_data", "experiments", "fig1", "optimizers", "sngd", "cap", 1.0),
     "real_data.experiments.fig1.optimizers.sngd", "'cap' was unexpected"),
    ("mnist-without-root", _set("experiments", "fig9", "data", "params", "source", "mnist"),
     "experiments.fig9.data.params", "'root' is a required property"),
    ("digits-one-class", _set("experiments", "fig9", "data", "params", "digits", [1, 1]),
     "experiments.fig9.data.params.digits", "one digit for both classes"),
    ("paper-figure-free-text", _set("experiments", "fig9", "paper_figure", "Figure 9"),
     "experiments.fig9.paper_figure", "does not match"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "key", "reason"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_bad_config_is_refused_by_key_before_any_job(built, change, key, reason):
    config = tiny()
    change(config)
    before = snapshot(built)
    result = run_with(built, config, TARGET, "-c1")
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert f"config key {key}:" in out and reason in out, out
    assert "Building DAG" not in out  # refused while the workflow was read
    assert snapshot(built) == before


@pytest.mark.slow
def test_whole_floats_are_taken_as_integers(built):
    """iterations: 300.0, seeds: 2.0, n: 6.0 mean 300, 2 and 6: fig2 is up to date (the
    build's own config edited in place, a dry run, then put back: the build is shared)."""
    config = tiny()
    fig2 = config["experiments"]["fig2"]
    fig2["train"]["iterations"] = 300.0
    fig2["seeds"] = 2.0
    fig2["data"]["params"]["n"] = 6.0
    before, own = snapshot(built), (built / "config/tiny.yaml").read_text()
    try:
        result = run_with(built, config, TARGET, "-n", in_place=True)
    finally:
        (built / "config/tiny.yaml").write_text(own)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Nothing to be done" in result.stdout + result.stderr
    assert snapshot(built) == before


def test_config_checks_name_the_key_path_directly():
    config = tiny()
    config["experiments"]["fig3"]["optimizers"]["ps"]["f_star"] = NAN
    with pytest.raises(configkeys.ConfigError, match=r"experiments\.fig3\.optimizers\.ps\.f_star"):
        configcheck.check_finite(config)
    assert (
        configkeys.key_path(("global_convergence", "scales", 1)) == "global_convergence.scales[1]"
    )


# ---------------------------------------------------------------- training: no silent repair


@pytest.mark.slow
def test_overflowing_parameters_stop_the_run_naming_it(built_copy):
    """NGD with lr 1e160: ||W|| overflows at the first step; the run stops with experiment,
    optimizer, seed and iteration, in the console and in the job's log."""
    config = tiny()
    config["experiments"]["fig2"]["optimizers"]["ngd"]["lr"] = 1e160
    target = "results-tiny/train/fig2/ngd.parquet"
    before = snapshot(built_copy)
    result = run_with(
        built_copy, config, target, "-c1", "--forcerun", target, *BY_MTIME, in_place=True
    )
    out = result.stdout + result.stderr
    assert result.returncode != 0
    message = "experiment fig2, optimizer ngd, seed 0: training diverged: metric W_norm"
    assert message in out and "not finite at iteration 1" in out, out
    log = (built_copy / "results-tiny/logs/train/fig2/ngd.log").read_text()  # all its seeds
    assert "Traceback" in log and message in log
    assert not (built_copy / target).exists()  # Snakemake removed the failed job's output
    after = snapshot(built_copy)
    assert after[TARGET] == before[TARGET]  # nothing built from it changed


@pytest.mark.slow
def test_polyak_step_that_never_fires_is_an_error(built_copy):
    config = tiny()
    config["experiments"]["fig2"]["optimizers"]["ps"]["f_star"] = 5
    target = "results-tiny/train/fig2/ps.parquet"
    result = run_with(
        built_copy, config, target, "-c1", "--forcerun", target, *BY_MTIME, in_place=True
    )
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "experiment fig2, optimizer ps, seed 0: Polyak step with f_star=5 never steps" in out
    assert "at or above the initial loss" in out


def test_non_finite_step_is_not_repaired():
    """A NaN step used to become no step (nan_to_num): now the run stops at the next log."""
    ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
    W_mm = torch.as_tensor(max_margin.solve_w_svm(ds["X"], ds["opt"]).W[None])
    with pytest.raises(metrics.NonFiniteError, match="parameter W not finite at iteration 2"):
        loop.train(
            TorchStepper,
            attention.Problem.from_arrays([ds]),
            OptimizerSpec("gd", lr=math.nan),
            iterations=3,
            log_iterations=np.array([0, 2, 3]),
            W_mm=W_mm,
        )


def test_zero_gradient_block_takes_no_step():
    """u = 0 at the start of joint training: W's gradient is zero, and W stays put."""
    ds = models.generate("dm", 0, dict(n=6, T=3, d=8))
    solutions = max_margin.solve_for_dataset(ds, True, "dm")
    problem = attention.Problem.from_arrays([ds])
    table, final = loop.train(
        TorchStepper,
        problem,
        OptimizerSpec("ngd", lr=0.1),
        iterations=1,
        log_iterations=np.array([0, 1]),
        W_mm=torch.as_tensor(solutions["W_mm"].W[None]),
        u_mm=torch.as_tensor(solutions["u_mm"].u[None]),
        train_u=True,
    )
    assert np.all(final["W"] == 0) and np.all(np.isfinite(final["u"]))


def test_polyak_never_firing_is_refused_in_train():
    ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
    W_mm = torch.as_tensor(max_margin.solve_w_svm(ds["X"], ds["opt"]).W[None])
    with pytest.raises(ValueError, match="f_star=5 never steps"):
        loop.train(
            TorchStepper,
            attention.Problem.from_arrays([ds]),
            OptimizerSpec("polyak", f_star=5.0),
            iterations=2,
            log_iterations=np.array([0, 2]),
            W_mm=W_mm,
        )


def test_claims_without_gap_rows_name_experiment_optimizer_and_metric():
    table = pd.DataFrame(
        {
            "experiment": ["fig2"] * 2,
            "optimizer": ["gd"] * 2,
            "seed": [0, 0],
            "iteration": [0, 1],
            "metric": ["loss", "loss"],
            "value": [1.0, 0.5],
        }
    )
    with pytest.raises(ValueError, match="experiment fig2: .* no gap_W rows of optimizer gd"):
        measure.series(table, "gd", "gap_W")


# ---------------------------------------------------------------- files know what they are


@pytest.mark.slow
def test_svm_file_with_another_seeds_solution_is_refused_naming_the_seed(built_copy):
    """Seed 0's entries replaced by seed 1's, each with the checksums its job recorded for
    them: every entry is intact, but seed 0 holds seed 1's solution, refused by name."""
    svm = "results-tiny/svm/fig2.npz"
    with np.load(built_copy / svm) as f:
        entries = {key: f[key] for key in f.files}
    entries |= {key.replace("seed1/", "seed0/"): v for key, v in entries.items() if "seed1/" in key}
    np.savez(built_copy / svm, **entries)  # newer: its runs rerun
    before = snapshot(built_copy)
    result = snakemake(built_copy, TARGET, "-c1", *BY_MTIME, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert (
        f"{svm} holds kind svm, experiment fig2, seed 1, but its path and the config call "
        "for kind svm, experiment fig2, seed 0" in out
    ), out
    assert f"snakemake --forcerun {svm}" in out
    # the failed job's log holds the error (-c1: the first of fig2's training jobs fails,
    # and stops the build)
    logs = (built_copy / "results-tiny/logs/train/fig2").glob("*.log")
    assert any("FileContractError" in log and svm in log for log in map(Path.read_text, logs))
    assert snapshot(built_copy)[TARGET] == before[TARGET]


@pytest.mark.slow
def test_run_file_of_another_optimizer_is_refused_by_the_aggregate(built_copy):
    runs = built_copy / "results-tiny/train/fig2"
    shutil.copy(runs / "ngd.parquet", runs / "gd.parquet")
    before = snapshot(built_copy)
    result = snakemake(built_copy, TARGET, "-c1", *BY_MTIME, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    run = "results-tiny/train/fig2/gd.parquet"
    assert f"{run} holds kind run, experiment fig2, optimizer ngd" in out
    assert "FileContractError" in (built_copy / "results-tiny/logs/aggregate/fig2.log").read_text()
    assert not (built_copy / TARGET).exists() or snapshot(built_copy)[TARGET] == before[TARGET]


@pytest.mark.slow
def test_an_edited_run_is_refused_by_the_aggregate_and_the_claims_kept(built_copy):
    """An edited run: the final gap_W of a run's table changed in place (its identity and
    every other metadata kept): the aggregate job refuses it by path, and no aggregate or
    claim is built from it. The run table holds every seed: the error names the one edited."""
    run = "results-tiny/train/fig2/gd.parquet"
    table = pq.read_table(built_copy / run)
    rows = table.to_pandas()
    last = rows.index[rows.metric == "gap_W"].max()
    seed = rows.seed[last]
    values = table.column("value").to_numpy().copy()
    values[last] *= 1e3
    edited = table.set_column(table.schema.get_field_index("value"), "value", pa.array(values))
    pq.write_table(edited.replace_schema_metadata(table.schema.metadata), built_copy / run)
    before = snapshot(built_copy)
    result = snakemake(built_copy, "results-tiny/claims.md", "-c1", *BY_MTIME, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"{run} was changed after its job wrote it (the rows of seed {seed} differ" in out, out
    assert f"snakemake --forcerun {run}" in out
    after = snapshot(built_copy)
    # Snakemake removes a job's old outputs before it runs it: the aggregate is gone or
    # unchanged, never rebuilt from the edit; the claims are as they were
    assert after.get(TARGET, before[TARGET]) == before[TARGET]
    for path in ("results-tiny/claims.md", "results-tiny/claims.csv"):
        assert after[path] == before[path]


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_unreadable_file_is_reported_by_path_without_unpickling(built_copy, damage):
    path = built_copy / "results-tiny/data/fig2.npz"
    content = path.read_bytes()
    path.write_bytes(
        b"\x80\x04garbage" * 10 if damage == "garbage" else content[: len(content) // 2]
    )
    result = snakemake(built_copy, TARGET, "-c1", *BY_MTIME, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "results-tiny/data/fig2.npz cannot be read as a .npz file" in out, out
    assert "snakemake --forcerun results-tiny/data/fig2.npz" in out
    assert "allow_pickle" not in out and "BadZipFile" not in out


def _rewrite_arrays(path: Path, seed: int, reseal: bool = True, **arrays) -> None:
    """Replace arrays of one seed of an .npz file, keeping its other entries (identity,
    stored hypotheses) and its mtime, so that Snakemake sees it as up to date. `reseal`:
    record the new arrays' checksums too, as if its job had written them (else: an edit)."""
    stat = path.stat()
    prefix = f"seed{seed}/"
    with np.load(path) as f:
        entries = {key: f[key] for key in f.files}
    entries.update({prefix + key: value for key, value in arrays.items()})
    if reseal:
        group = {k[len(prefix) :]: v for k, v in entries.items() if k.startswith(prefix)}
        digests = {k: npz.array_sha256(v) for k, v in group.items() if k != npz.CHECKSUM_KEY}
        entries[prefix + npz.CHECKSUM_KEY] = np.array(json.dumps(digests))
    np.savez(path, **entries)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.slow
def test_the_figure_prints_the_hypotheses_its_files_store_and_measures_none(built_copy):
    """fig3's figure job, rerun on data and svm arrays that measure other hypotheses (a
    non-zero W0, breaking Cond. 1 i; u_mm twice as long, no sample on its margin) but
    hold the reports their jobs stored, prints the stored ones."""
    results = built_copy / "results-tiny"
    data, svm = results / "data/fig3.npz", results / "svm/fig3.npz"
    stored = npz.hypotheses_by_seed(data, svm)
    _rewrite_arrays(data, 0, W0=np.ones_like(npz.load_data(data)[0]["W0"]))
    _rewrite_arrays(svm, 0, u_mm=2 * npz.load_seeds(svm)[0]["u_mm"])
    note = hypotheses.describe(hypotheses.summarize(stored))
    # control: measured again on these arrays, the note would say otherwise
    datasets, solutions = npz.load_data(data), npz.load_seeds(svm)
    measured = [hypotheses.report(datasets[s], solutions[s]) for s in datasets]
    remeasured = hypotheses.describe(hypotheses.summarize(measured))
    assert "zero init True" in note and "zero init False" in remeasured
    assert measured[0]["cond1_sv_fraction"] == 0 < stored[0]["cond1_sv_fraction"]
    (results / "logs/figure/fig3.log").unlink()  # the note it logs comes from this run
    snakemake(
        built_copy, "results-tiny/fig3.pdf", "-c1", "--forcerun", "results-tiny/fig3.pdf", *BY_MTIME
    )
    log = (results / "logs/figure/fig3.log").read_text()
    assert note in log and remeasured not in log
    caption = (results / "fig3.caption.md").read_text()  # and the caption beside the figure
    assert markdown.text(note) in caption and markdown.text(remeasured) not in caption


@pytest.mark.slow
def test_deleted_intermediate_is_rebuilt_with_forcerun_as_the_readme_says(built_copy):
    """Snakemake keeps downstream files whose input went missing: after deleting an svm
    file nothing is planned; --forcerun on it rebuilds it and what was built from it."""
    (built_copy / "results-tiny/svm/fig2.npz").unlink()
    plain = snakemake(built_copy, TARGET, "-n", *BY_MTIME)
    assert "Nothing to be done" in plain.stdout + plain.stderr
    forced = snakemake(
        built_copy, TARGET, "-n", "--forcerun", "results-tiny/svm/fig2.npz", *BY_MTIME
    ).stdout
    # the synthetic stages: a job per experiment (svm), per experiment and optimizer (train)
    assert re.search(r"^svm\s+1$", forced, re.M)
    assert re.search(r"^train\s+4$", forced, re.M)
    assert re.search(r"^aggregate\s+1$", forced, re.M)


def _dataset_and_solution():
    ds = models.generate("example1", 0, dict(n=6, T=3, d=12))
    return ds, max_margin.to_arrays(max_margin.solve_for_dataset(ds, False, "test"))


def test_w_mm_is_checked_against_its_data(tmp_path):
    ds, arrays = _dataset_and_solution()
    ident = store.identity("svm", "fig2", {"any": 1}, seed=0)
    npz.save_seeds(tmp_path / "good.npz", {0: arrays}, {0: ident})
    good = load_svm(tmp_path / "good.npz", {0: ds}, [ident])
    assert np.array_equal(good[0]["W_mm"], arrays["W_mm"])
    # twice W_mm satisfies every constraint, but is not the max-margin solution
    npz.save_seeds(tmp_path / "long.npz", {0: {**arrays, "W_mm": 2 * arrays["W_mm"]}}, {0: ident})
    with pytest.raises(store.FileContractError, match=r"long\.npz: seed 0: W_mm is not the max-"):
        load_svm(tmp_path / "long.npz", {0: ds}, [ident])
    # another seed's solution: the constraints of this data fail
    other = models.generate("example1", 1, dict(n=6, T=3, d=12))
    other_arrays = max_margin.to_arrays(max_margin.solve_for_dataset(other, False, "other"))
    npz.save_seeds(tmp_path / "other.npz", {0: other_arrays}, {0: ident})
    with pytest.raises(store.FileContractError, match="smallest margin"):
        load_svm(tmp_path / "other.npz", {0: ds}, [ident])


def test_identity_names_config_mismatch_and_missing_identity(tmp_path):
    ds, _ = _dataset_and_solution()
    ident = store.identity("data", "fig2", {"n": 6}, seed=0)
    npz.save_seeds(tmp_path / "d.npz", {0: ds}, {0: ident})
    with pytest.raises(store.FileContractError, match="from another config"):
        npz.load_data(tmp_path / "d.npz", [store.identity("data", "fig2", {"n": 7}, seed=0)])
    npz.save_seeds(tmp_path / "old.npz", {0: ds}, {0: None})  # written without an identity
    with pytest.raises(store.FileContractError, match="records no identity"):
        npz.load_data(tmp_path / "old.npz", [ident])
    # another program's: neither identity nor checksum
    np.savez(tmp_path / "other.npz", **{f"seed0/{k}": v for k, v in ds.items()})
    with pytest.raises(store.FileContractError, match=r"other.npz \(seed 0\) records no checksum"):
        npz.load_data(tmp_path / "other.npz", [ident])
    npz.save_npz(tmp_path / "flat.npz", ds, ident)  # the layout before the seed axis
    with pytest.raises(store.FileContractError, match=r"flat.npz holds seeds \[\], but"):
        npz.load_data(tmp_path / "flat.npz", [ident])


def test_aggregate_refuses_a_run_twice(tmp_path):
    table = parquet.metrics_table("fig2", "gd", 0, np.array([0, 1]), {"loss": np.array([1.0, 0.5])})
    for name in ("a", "b"):
        parquet.save_table(tmp_path / f"{name}.parquet", table)
    with pytest.raises(store.FileContractError, match="both hold the run experiment fig2"):
        parquet.concat_tables([tmp_path / "a.parquet", tmp_path / "b.parquet"])


def test_rows_of_a_run_must_match_its_identity(tmp_path):
    table = parquet.metrics_table("fig2", "ngd", 0, np.array([0]), {"loss": np.array([1.0])})
    claimed = store.identity("run", "fig2", {}, seed=0, optimizer="gd")
    parquet.save_table(tmp_path / "r.parquet", parquet.with_identity(table, claimed))
    with pytest.raises(store.FileContractError, match="rows of optimizer"):
        parquet.read_table(tmp_path / "r.parquet", claimed)


def test_file_json_is_strict(tmp_path):
    with pytest.raises(ValueError):
        store.identity("data", "fig2", {"lr": math.nan})
    table = pa.table({"x": [1]})
    with pytest.raises(ValueError):
        parquet.with_run_info(table, {"device": math.inf})
    parquet.save_table(tmp_path / "t.parquet", parquet.with_run_info(table, {"device": "cpu"}))
    json.loads(pq.read_schema(tmp_path / "t.parquet").metadata[parquet.RUN_INFO_KEY])


@pytest.mark.slow
def test_fig9_mnist_with_a_wrong_root_names_its_key(built_copy, tmp_path):
    config = tiny()
    params = config["experiments"]["fig9"]["data"]["params"]
    params.update(source="mnist", root=str(tmp_path / "no-such-folder"))
    target = "results-tiny/data/fig9.npz"  # built already: by modification times, rerun it
    result = run_with(
        built_copy, config, target, "-c1", "--forcerun", target, *BY_MTIME, in_place=True
    )
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "experiments.fig9.data.params.root" in out, out
    assert "config key `real_data.data_root`" not in out


def test_binary_digits_of_one_class_are_refused_naming_the_key():
    schema = yaml.safe_load((Path(__file__).parents[1] / SCHEMA).read_text())
    config = tiny()
    config["experiments"]["fig9"]["data"]["params"]["digits"] = [1, 1]
    with pytest.raises(configkeys.ConfigError, match=r"fig9\.data\.params\.digits: \[1, 1\]"):
        configcheck.check(config, schema)
    config["experiments"]["fig9"]["data"]["params"]["digits"] = [1, 7]  # two classes: valid
    configcheck.check(config, schema)


def test_config_checks_do_not_touch_a_valid_config():
    config = tiny()
    original = copy.deepcopy(config)
    schema = yaml.safe_load(
        (Path(__file__).parents[1] / "workflow/schemas/config.schema.yaml").read_text()
    )
    configcheck.check(config, schema)
    assert config == original


# ---------------------------------------------------------------- the report is safe

HOSTILE = "GD</script><b id=INJECTED>x</b>"


def _default_config() -> dict:
    return yaml.safe_load((Path(__file__).parents[1] / "config/config.yaml").read_text())


@pytest.mark.parametrize(
    "path",
    [
        ("experiments", "fig2", "title"),
        ("experiments", "fig2", "optimizers", "gd", "label"),
        ("global_convergence", "optimizers", "gd", "label"),
        ("real_data", "experiments", "fig1", "title"),
        ("real_data", "experiments", "fig1", "optimizers", "sgd", "label"),
        ("real_data", "similarity", "title"),
        ("sweeps", "fig3", "title"),
        ("sweeps", "fig3", "grid", "optimizers.gd.label"),
        ("results",),
    ],
    ids=lambda path: ".".join(path),
)
def test_markup_in_any_config_text_is_refused_naming_the_key(path):
    """Snakemake's report writes every job's params (the config among them) as JSON into a
    <script> element without escaping `</`: a label like HOSTILE would end the script and
    open a live element, so every free-text key refuses it, naming the key."""
    config = _default_config()
    target = config
    for key in path[:-1]:
        target = target.setdefault(key, {})
    if path[-1] == "optimizers.gd.label":
        target[path[-1]] = ["GD", HOSTILE]
        where = re.escape(".".join(path)) + r"\[1\]"
    else:
        target[path[-1]] = HOSTILE
        where = re.escape(".".join(path))
    with pytest.raises(configkeys.ConfigError, match=rf"config key {where}: .*'<' and '>'"):
        configcheck_texts.check_markup(config)


def test_markup_in_a_config_key_is_refused_naming_it():
    config = tiny()
    config["experiments"]["fig<b>"] = config["experiments"].pop("fig2")
    with pytest.raises(configkeys.ConfigError, match=r"config key experiments\.fig<b>"):
        configcheck_texts.check_markup(config)


def test_the_config_checks_run_the_markup_check_first():
    config = tiny()
    config["experiments"]["fig2"]["optimizers"]["gd"]["label"] = HOSTILE
    schema = yaml.safe_load((Path(__file__).parents[1] / SCHEMA).read_text())
    with pytest.raises(configkeys.ConfigError, match=r"fig2\.optimizers\.gd\.label"):
        configcheck.check(config, schema)


def test_docutils_config_turns_raw_and_include_off(monkeypatch):
    from docutils.core import publish_parts

    conf = Path(__file__).parents[1] / "workflow/report/docutils.conf"
    monkeypatch.setenv("DOCUTILSCONFIG", str(conf))
    text = ".. raw:: html\n\n   <b id=raw>x</b>\n\n.. include:: /etc/hostname\n"
    quiet = {"warning_stream": StringIO()}  # the warnings also go into the body
    body = publish_parts(text, writer="html", settings_overrides=quiet)["body"]
    assert "<b id=raw>" not in body
    assert "&quot;raw&quot; directive disabled" in body
    assert "&quot;include&quot; directive disabled" in body


class _Elements(HTMLParser):
    """Every start tag of an HTML page: (tag, attributes), as a browser's tokenizer sees
    them (the text inside <script> is not parsed for tags, up to its `</script`)."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


@pytest.mark.slow
def test_hostile_title_and_label_stay_text_in_the_report(tmp_path, request):
    """A title with a raw-HTML directive, an include and markup, and labels that would be
    javascript: links (HTML tags are refused by the config checks: see above): the report
    holds no injected element and includes no local file; opened in headless chromium (where
    installed) it runs no script, holds no injected link and shows the texts as text."""
    (tmp_path / "project").mkdir()
    workdir = copy_project(tmp_path / "project")
    # a path that escaping would leave alone (no underscore, no markup), outside the project
    secret_dir = Path(tempfile.gettempdir()) / f"attnbiassecret{uuid.uuid4().hex}"
    secret_dir.mkdir()
    secret = secret_dir / "secret.txt"
    secret.write_text("SECRET-6f1d0c\n")
    request.addfinalizer(lambda: shutil.rmtree(secret_dir, ignore_errors=True))
    title = (
        "Hostile **bold** title\n\n"
        ".. raw:: html\n\n"
        "   img src=x id=injected onerror=window.pwned=1\n\n"
        f".. include:: {secret}\n\n"
        "`link javascript:window.pwned=4`_ |sub| :math:`x` & &amp; \"quoted\" 'single'"
    )
    labels = {"gd": "javascript:window.pwned=2", "ngd": "`N javascript:window.pwned=3`_"}
    config = {
        "device": "cpu",
        "experiments": {
            "hostile": {
                "title": title,
                "layout": "two_token",
                "seeds": 1,
                "data": {"model": "two_token", "params": {"d": 2}},
                "train": {"iterations": 50, "log_points": 10},
                "optimizers": {
                    "gd": {"label": labels["gd"], "rule": "gd", "lr": 1.0},
                    "ngd": {"label": labels["ngd"], "rule": "ngd", "lr": 0.1},
                },
            }
        },
    }
    (workdir / "config/hostile.yaml").write_text(yaml.safe_dump(config))
    target, report = "results/hostile.pdf", "results/report.html"
    snakemake(workdir, target, "-c2", "-q", config="config/hostile.yaml")
    snakemake(workdir, target, "--report", report, config="config/hostile.yaml")
    html = (workdir / report).read_text()
    assert "SECRET-6f1d0c" not in html
    elements = _Elements(html).found
    assert not [e for e in elements if e[1].get("id", "").lower() == "injected"]
    assert not [e for e in elements if e[0] in ("img", "b", "strong", "a", "iframe")]
    # the template's own script elements, and no more (each ends where it should)
    template = (Path(snakemake_report.__file__).parent / "template/index.html.jinja2").read_text()
    assert sum(tag == "script" for tag, _ in elements) == template.count("<script")

    from chromium import Chromium, unavailable
    from test_report import HELPERS, caption, open_listing

    reason = unavailable()
    if reason:
        pytest.skip(f"the HTML is checked; the page in a browser is not: {reason}")
    browser = Chromium()
    try:
        page = browser.page((workdir / report).as_uri())
        page.wait_until("typeof app !== 'undefined' && document.querySelectorAll('a').length > 3")
        page.evaluate(HELPERS)
        open_listing(page, "Figures", None)  # one subcategory: the listing opens at once
        text = caption(page, target)  # also: no docutils "System Message" in it
        assert ".. raw:: html" in text and "onerror" in text and ".. include::" in text
        assert "Hostile **bold** title" in text
        for label in labels.values():
            assert label in text
        assert "SECRET-6f1d0c" not in page.evaluate("document.documentElement.outerHTML")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.evaluate("document.getElementById('injected') === null")
        links = "[...document.querySelectorAll('a')].filter(a => /script:/i.test(a.href)).length"
        assert page.evaluate(links) == 0
        assert page.evaluate("document.querySelectorAll('strong b, #raw').length") == 0
    finally:
        browser.close()


def test_provenance_is_strict_json(tmp_path):
    from attnbias.workflow import provenance

    with pytest.raises(ValueError):
        provenance.config_sha256({"lr": math.nan})
    with pytest.raises(ValueError):
        provenance.save(tmp_path / "p.json", {"config": {"lr": math.inf}})
    assert not (tmp_path / "p.json").exists()


def test_renamed_keys_name_their_replacement():
    """Old keys fail fast (no Snakemake needed), naming the key that replaces them."""
    config = tiny()
    fig3 = config["experiments"]["fig3"]
    fig3["figure"] = fig3.pop("layout")
    with pytest.raises(
        configkeys.ConfigError, match=r"experiments\.fig3\.figure: renamed to layout"
    ):
        configcheck.check_renamed(config)
    config = tiny()
    config["global_convergence"]["optimizers"]["ngd"]["cap"] = 5.0
    with pytest.raises(configkeys.ConfigError, match=r"ngd\.cap: renamed to max_step"):
        configcheck.check_renamed(config)
    configcheck.check_renamed(tiny())  # the current keys pass


def _undescribed(node, path="", described=frozenset()):
    """Key paths of schema properties without a `description` (a key that an if/then
    branch constrains further is described where it is declared)."""
    if not isinstance(node, dict):
        return
    own = node.get("properties", {})
    for key, sub in own.items():
        if key not in described and "description" not in sub:
            yield f"{path}.{key}"
        yield from _undescribed(sub, f"{path}.{key}")
    described = set(described) | set(own)
    for branch in [*node.get("allOf", []), node.get("then")]:
        yield from _undescribed(branch, path, described)
    for key in ("items", "additionalProperties"):
        yield from _undescribed(node.get(key), f"{path}[]", frozenset())


def test_every_schema_key_is_described():
    schema = yaml.safe_load((Path(__file__).parents[1] / SCHEMA).read_text())
    missing = [*_undescribed(schema)]
    for name, definition in schema["$defs"].items():
        missing += _undescribed(definition, f"$defs.{name}")
    assert not missing, missing
