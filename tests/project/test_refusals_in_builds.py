"""Bad input and faults: every refusal names its culprit (the config key or the
file), happens before a wrong result is written, and leaves what was already built as it was.

The workflow tests run the real Snakemake on the temporary copy of the project built on
config/tiny.yaml that the end-to-end tests share (`built`); each case runs on that build, or
on a copy of it where it changes files, with config/tiny.yaml changed in one key.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from project import snakemake
from tiny_configs import INF, NAN, tiny

from attnbias.data import hypotheses
from attnbias.workflow import markdown, npz

TARGET = "results-tiny/fig2/metrics.parquet"


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
    config writing there is refused (tests/workflow/test_results_folder.py)."""
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
     "real_data.experiments.fig1.optimizers.sngd.cap", "rule sngd takes no setting 'cap'"),
    ("mnist-without-root", _set("experiments", "fig9", "data", "params", "source", "mnist"),
     "experiments.fig9.data.params.root", "None is not of type 'string'"),
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


@pytest.mark.slow
@pytest.mark.parametrize("place", ["fig2.pdf", "logs"])
def test_a_link_in_the_results_folder_is_refused_naming_it(built_copy, tmp_path, place):
    """A final PDF replaced by a link to a file elsewhere was taken as up to date (exit 0);
    a linked logs folder sent the logs elsewhere without a word. The control: the same
    target, the link replaced by the file, is up to date."""
    path = built_copy / "results-tiny" / place
    elsewhere = tmp_path / "elsewhere"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    result = snakemake(built_copy, "results-tiny/fig2.pdf", "-c1", *BY_MTIME, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"results-tiny/{place} -> {elsewhere}" in out, out
    path.unlink()
    elsewhere.rename(path)
    control = snakemake(built_copy, "results-tiny/fig2.pdf", "-n", *BY_MTIME)
    assert "Nothing to be done" in control.stdout + control.stderr
