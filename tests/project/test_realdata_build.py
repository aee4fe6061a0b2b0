"""End to end: the real-data figures in fixture mode, missing data, and kill-and-resume.

Fixture mode is config/tiny.yaml plus the files `tests/support/write_fixtures.py` writes in the real
on-disk formats (MNLI jsonl, the WILDS CivilComments folder, MNIST IDX, CIFAR-10 pickles,
a tiny BERT saved with save_pretrained); the same loaders and training code as a real run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from project import REPO, copy_project, planned_jobs, snakemake
from system_packages import requires
from write_fixtures import train_samples, write_all

pytestmark = pytest.mark.slow

REAL_FIGURES = ("fig1", "fig4", "fig6", "fig7", "fig10")


@pytest.fixture(scope="module")
def real_build(tmp_path_factory) -> Path:
    workdir = copy_project(tmp_path_factory.mktemp("real"))
    write_all(workdir)
    snakemake(workdir, "real", "-c2")
    return workdir


def test_every_real_figure_builds_from_fixtures(real_build):
    for name in REAL_FIGURES:
        for suffix in (".pdf", ".png"):
            assert (real_build / "results-tiny" / f"{name}{suffix}").stat().st_size > 10_000


def test_nothing_left_to_do_after_the_build(real_build):
    out = snakemake(real_build, "real", "-n").stdout
    assert "Nothing to be done" in out, out


def test_settings_that_change_no_result_rerun_nothing(real_build):
    own = real_build / "config" / "tiny.yaml"  # edited in place (it owns results-tiny), put back
    text = own.read_text()
    config = yaml.safe_load(text)
    config["real_data"].update(checkpoint_every=123, progress=True)
    # key order kept: the optimizers' order is the legend's, and reordering it redraws
    own.write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        out = snakemake(real_build, "real", "-n").stdout
    finally:
        own.write_text(text)
    assert "Nothing to be done" in out, out


def test_tables_hold_the_paper_metrics(real_build):
    results = real_build / "results-tiny"
    tables = {f: pd.read_parquet(results / f / "metrics.parquet") for f in REAL_FIGURES[:4]}
    config = yaml.safe_load((real_build / "config" / "tiny.yaml").read_text())["real_data"]
    for name, table in tables.items():
        settings = config["experiments"][name]
        assert set(table["optimizer"]) == set(settings["optimizers"])
        assert {"train_loss", "test_accuracy"} <= set(table["metric"])
        acc = table[table["metric"] == "test_accuracy"]["value"]
        assert acc.between(0, 1).all()
        # logged at step 0, every log_every steps and at the end
        n_train = train_samples(settings["dataset"])
        total = settings["train"]["epochs"] * (n_train // settings["train"]["batch_size"])
        steps = sorted(set(table["iteration"]))
        assert steps[0] == 0 and steps[-1] == total
    assert "worst_group_accuracy" in set(tables["fig4"]["metric"])
    norms = [m for m in set(tables["fig7"]["metric"]) if m.startswith("norm/")]
    assert len(norms) == 2 + 2 * 2 + 1  # patch + position embeddings, 2 blocks x 2, head
    assert not any(m.startswith("norm/") for m in set(tables["fig6"]["metric"]))


def test_fixture_runs_learn(real_build):
    """The fixtures are learnable: the loop really trains (Adam's train loss falls at every
    log point)."""
    table = pd.read_parquet(real_build / "results-tiny" / "fig7" / "metrics.parquet")
    loss = table[(table["metric"] == "train_loss") & (table["optimizer"] == "adam")]
    loss = loss.sort_values("iteration")["value"].to_numpy()
    assert len(loss) >= 5 and np.all(np.diff(loss) < 0), loss


@requires("poppler-utils")
def test_figures_are_stamped_as_fixture_runs(real_build):
    for name in REAL_FIGURES:
        text = subprocess.run(
            ["pdftotext", str(real_build / "results-tiny" / f"{name}.pdf"), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "FIXTURE RUN" in text, name


@requires("poppler-utils")
def test_figures_fit_a_page_with_their_caption_beside_them(real_build):
    """The print size on the fixtures: at most 7 x 9 in, type of 7 pt or more, few words in the
    image; the title and the settings in <name>.caption.md."""
    from pdf_text import body_sizes, font_sizes, page_inches, words

    for name in REAL_FIGURES:
        pdf = real_build / "results-tiny" / f"{name}.pdf"
        width, height = page_inches(pdf)
        assert width <= 7.0 + 1e-6 and height <= 9.0, (name, width, height)
        assert min(body_sizes(font_sizes(pdf))) >= 7.0, name
        assert len(words(pdf)) < 150, name
        caption = (real_build / "results-tiny" / f"{name}.caption.md").read_text()
        assert caption.startswith("**FIXTURE RUN"), name
        assert ("Optimizers:" in caption) != (name == "fig10"), name


def test_similarity_histogram_is_consistent(real_build):
    for dataset in ("mnli", "civilcomments"):
        similarity = real_build / "results-tiny" / "fig10" / "similarity"
        h = pd.read_parquet(similarity / f"{dataset}.parquet")
        assert h["count"].sum() == h["pairs"].iloc[0] > 0
        assert h["texts"].iloc[0] == 30
        inside = h[(h["lo"] >= -0.1 - 1e-12) & (h["hi"] <= 0.1 + 1e-12)]["count"].sum()
        assert inside / h["count"].sum() == pytest.approx(h["within_band"].iloc[0])


def test_missing_data_stops_before_training(tmp_path):
    workdir = copy_project(tmp_path)  # no fixtures written
    result = snakemake(workdir, "results-tiny/fig6.pdf", "-c1", check=False)
    assert result.returncode != 0
    log = result.stdout + result.stderr
    assert "mnist" in log and "real_data.data_root" in log
    assert "yann.lecun.com" in log or "MNIST/raw" in log  # how to get it
    assert not (workdir / "results-tiny" / "train").exists()  # no training job started


def test_everything_missing_is_listed_in_one_message_without_traceback(tmp_path):
    workdir = copy_project(tmp_path)  # no fixtures: fig10 lacks MNLI, CivilComments and BERT
    result = snakemake(workdir, "results-tiny/fig10.pdf", "-c1", check=False)
    assert result.returncode != 0
    console = result.stdout + result.stderr
    assert console.count("3 items missing") == 1, console
    for item in ("MNLI", "multinli_1.0", "CivilComments", "civilcomments_v1.0", "BERT model"):
        assert item in console
    assert "real_data.data_root" in console and "real_data.models.bert" in console
    assert "Traceback" not in console
    assert not (workdir / "results-tiny").exists()  # before any job: nothing written


def test_the_whole_real_build_gets_one_message_listing_each_item_once(tmp_path):
    """`snakemake real` with the local profile (which shows failed jobs' logs): the five
    missing items of the five figures, each once with its key and the figures needing it."""
    workdir = copy_project(tmp_path)
    shutil.copytree(REPO / "profiles", workdir / "profiles")
    result = snakemake(workdir, "real", "-c2", "--profile", "profiles/local", check=False)
    assert result.returncode != 0
    console = result.stdout + result.stderr
    assert console.count("5 items missing") == 1, console
    bullets = [line for line in console.splitlines() if line.startswith("  - ")]
    assert len(bullets) == 5, bullets
    for start, key, users in [
        ("  - MNLI", "real_data.data_root", "fig1, fig10"),
        ("  - CivilComments", "real_data.data_root", "fig10, fig4"),
        ("  - mnist", "real_data.data_root", "fig6"),
        ("  - cifar10", "real_data.data_root", "fig7"),
        ("  - BERT model", "real_data.models.bert", "fig1, fig10, fig4"),
    ]:
        (line,) = [b for b in bullets if b.startswith(start)]
        assert f"`{key}`" in line and f"(needed by {users})" in console, line
    assert not (workdir / "results-tiny").exists()


def test_missing_model_names_the_config_key(tmp_path):
    workdir = copy_project(tmp_path)
    write_all(workdir)
    shutil.rmtree(workdir / "fixtures" / "tiny-bert")
    result = snakemake(workdir, "results-tiny/fig1.pdf", "-c1", check=False)
    assert result.returncode != 0
    log = result.stdout + result.stderr
    assert "real_data.models" in log and "fixtures/tiny-bert" in log
    assert not (workdir / "results-tiny" / "train").exists()


def _long_run_config(workdir: Path) -> str:
    """tiny.yaml with fig7's SGD run long enough to be killed mid-way."""
    config = yaml.safe_load((workdir / "config" / "tiny.yaml").read_text())
    fig7 = config["real_data"]["experiments"]["fig7"]
    fig7["train"].update(epochs=60, log_every=10)
    fig7["optimizers"] = {"sgd": fig7["optimizers"]["sgd"]}
    config["real_data"]["checkpoint_every"] = 7
    (workdir / "config" / "long.yaml").write_text(yaml.safe_dump(config))
    return "config/long.yaml"


RUN = "results-tiny/train/fig7/sgd/seed0.parquet"
CHECKPOINT = "results-tiny/checkpoints/fig7/sgd/seed0.pt"


def test_killed_run_resumes_to_the_same_metrics(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "killed").mkdir()
    reference = copy_project(tmp_path / "reference")
    killed = copy_project(tmp_path / "killed")
    for workdir in (reference, killed):
        write_all(workdir)
    config = _long_run_config(reference)
    _long_run_config(killed)
    snakemake(reference, RUN, "-c1", config=config)

    env = dict(os.environ, PYTHONPATH=str(killed / "src"))
    process = subprocess.Popen(
        [sys.executable, "-m", "snakemake", RUN, "-c1", "--configfile", config],
        cwd=killed,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the kill reaches the job too
    )
    deadline = time.monotonic() + 300
    while not (killed / CHECKPOINT).exists():
        assert process.poll() is None, "the run ended before writing a checkpoint"
        assert time.monotonic() < deadline, "no checkpoint within 5 minutes"
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (killed / RUN).exists(), "killed too late: the run had finished"

    snakemake(killed, "--unlock", config=config)  # what a user does after a hard kill
    snakemake(killed, RUN, "-c1", "--rerun-incomplete", config=config)
    log = (killed / "results-tiny/logs/train/fig7/sgd/seed0.log").read_text()
    assert "resumed from" in log
    assert not (killed / CHECKPOINT).exists()  # removed once the run is complete
    pd.testing.assert_frame_equal(
        pd.read_parquet(killed / RUN), pd.read_parquet(reference / RUN), check_exact=True
    )


def test_real_figures_carry_provenance(real_build):
    for name in ("fig1", "fig7"):
        record = json.loads((real_build / "results-tiny" / f"{name}.provenance.json").read_text())
        assert record["figure"] == name and record["title"].startswith("FIXTURE RUN")
        assert record["training"]["devices"] == ["cpu"]  # tiny.yaml pins the CPU
        config = yaml.safe_load((real_build / "config" / "tiny.yaml").read_text())
        optimizers = config["real_data"]["experiments"][name]["optimizers"]
        assert record["training"]["runs"] == len(optimizers)
        assert record["wall_time_s"]["rules"]["train_real"]["jobs"] == len(optimizers)
    record = json.loads((real_build / "results-tiny" / "fig10.provenance.json").read_text())
    assert record["wall_time_s"]["rules"]["token_similarity"]["jobs"] == 2


def test_report_holds_the_real_figures_with_captions(real_build):
    snakemake(real_build, "real", "--report", "results-tiny/report.html")
    html = (real_build / "results-tiny" / "report.html").read_text()
    for name in REAL_FIGURES:
        assert f"results-tiny/{name}.png" in html and f"results-tiny/{name}.pdf" in html
    # captions are rendered into the report: the config values appear in them
    assert "matched validation" in html and "worst-group" in html
    assert "word-embedding matrix" in html


def test_default_config_plans_every_real_figure(tmp_path):
    """On the default config, `snakemake -n real` plans each real-data target's jobs (the
    data are missing, which only the jobs themselves find out)."""
    workdir = copy_project(tmp_path)
    out = snakemake(workdir, "real", "-n", config="config/config.yaml").stdout
    for name in REAL_FIGURES:  # each target, by name
        assert f"results/{name}.pdf" in out, name
    jobs = planned_jobs(workdir, config="config/config.yaml", target="real")
    # the paper's four figures, 4 x 5 each (seeds 1 to 5); their sweeps (fig1_lr..fig7_lr),
    # 17 runs each (seed 0); fig6_mnist5k, 4 x 5; its sweep, 16 runs (seed 0); fig1_minilm
    # and fig4_minilm, 4 x 5 each; their sweeps, 16 runs each
    assert jobs["train_real"] == 4 * 20 + 4 * 17 + 20 + 16 + 2 * 20 + 2 * 16
    assert jobs["check_real_data"] == 5 + 4 + 2 + 4 + 1  # fig10_minilm's too
    assert jobs["figure_real"] == 4 + 4 + 2 + 4 and jobs["figure_similarity"] == 2
    assert jobs["token_similarity"] == 2 + 2
