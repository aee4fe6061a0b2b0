"""End-to-end: the neighbours' targets (results/tfsvm_rank.pdf, results/attentionmd_joint.pdf,
results/attentionmd_local.pdf, results/tfsvm_local.pdf), built by the real workflow on
config/tiny.yaml in a temporary copy of the project; none is part of rule all."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from pdf_text import body_sizes, font_sizes, page_inches
from project import copy_project, planned_jobs, snakemake

from attnbias.figures import style

pytestmark = pytest.mark.slow  # end-to-end builds (pyproject.toml's markers)

RESULTS = "results-tiny"
TARGETS = ("tfsvm_rank", "attentionmd_joint", "attentionmd_local", "tfsvm_local")


@pytest.fixture(scope="module")
def neighbours_build(tmp_path_factory):
    workdir = copy_project(tmp_path_factory.mktemp("neighbours"))
    snakemake(workdir, *(f"{RESULTS}/{t}.pdf" for t in TARGETS), "-c1", "-q")
    return workdir


def test_the_targets_are_not_in_the_default_build(tmp_path):
    workdir = copy_project(tmp_path)
    jobs = planned_jobs(workdir)
    assert jobs and not set(TARGETS) & set(jobs)


@pytest.mark.parametrize("target", TARGETS)
def test_figure_caption_and_print_size(neighbours_build, target):
    out = neighbours_build / RESULTS
    assert (out / f"{target}.pdf").read_bytes().startswith(b"%PDF")
    assert (out / f"{target}.png").read_bytes().startswith(b"\x89PNG")
    assert (out / f"{target}.caption.md").read_text().startswith("**")
    width, height = page_inches(out / f"{target}.pdf")
    assert width <= style.FULL_WIDTH + 0.01 and height <= style.MAX_HEIGHT
    assert min(body_sizes(font_sizes(out / f"{target}.pdf"))) >= style.MIN_FONT_PT


def test_the_rank_table_counts_the_infeasible_cell(neighbours_build):
    out = neighbours_build / RESULTS
    table = pd.read_csv(out / "tfsvm_rank.csv")
    assert len(table) == 4  # n in {2, 3} x T = 5 x d in {1, 3}
    d1 = table[table["d"] == 1]
    assert (d1["infeasible"] == d1["instances"]).all()  # d = 1: no W separates
    assert d1["mean_nuclear"].isna().all()  # counted, never ranked
    caption = (out / "tfsvm_rank.caption.md").read_text()
    assert f"{int(table['infeasible'].sum())} of {int(table['instances'].sum())}" in caption


def test_the_joint_run_reports_both_runs_measured(neighbours_build):
    out = neighbours_build / RESULTS
    summary = json.loads((out / "attentionmd_joint.json").read_text())
    final = summary["final_cos"]
    assert summary["epochs"] == 300 and summary["tokens"] == summary["their_tokens"] == [1, 0]
    assert 1 - final["ours_W"] < (1 - final["theirs_W"]) / 10  # theirs stalled by step 250
    caption = (out / "attentionmd_joint.caption.md").read_text()
    assert f"ours cos {final['ours_W']:.6f} (W)" in caption
    assert f"theirs {final['theirs_W']:.5f} (W)" in caption


def test_the_local_runs_count_their_tokens_in_the_caption(neighbours_build):
    out = neighbours_build / RESULTS
    summary = json.loads((out / "attentionmd_local.json").read_text())
    finals = pd.read_csv(out / "attentionmd_local_final.csv")
    assert summary["runs"] == 2 * 3 and len(finals) == 2 * 3 * 3  # seeds x p (x SVM p)
    caption = (out / "attentionmd_local.caption.md").read_text()
    assert f"Of 6 runs, {summary['not_globally_optimal']} end on tokens other" in caption
    assert "2 seeds, fewer than their 100" in caption


def test_the_tfsvm_local_runs_print_their_correlations(neighbours_build):
    out = neighbours_build / RESULTS
    summary = json.loads((out / "tfsvm_local.json").read_text())
    finals = pd.read_csv(out / "tfsvm_local_final.csv")
    assert summary["runs"] == len(finals) == 2 * 2  # seeds x (W, K Q^T)
    caption = (out / "tfsvm_local.caption.md").read_text()
    assert f"{summary['mean_correlation']['W']['fro']:.4f} (Frobenius)" in caption
