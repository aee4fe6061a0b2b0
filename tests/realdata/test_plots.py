"""Real-data figures (attnbias.realdata.plots): the legend and caption of a capped run."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from project import REPO

from attnbias.realdata import plots

OPTIMIZERS = {
    "sgd": {"label": "SGD", "rule": "sgd", "lr": 0.1},
    "sngd": {"label": "SNGD", "rule": "sngd", "lr": 0.1, "max_step": 100.0},
    "sps": {"label": "SPS", "rule": "sps", "c": 0.5, "eta_max": 0.1},
}


LEGEND = {"sgd": ("SGD", "SGD lr=0.1"), "sngd": ("SNGD", "SNGD ..."), "sps": ("SPS", "SPS ...")}


STEPS = np.arange(0, 80, 16)


def run_table(sps_share: float, sngd_share: float = 0.0) -> pd.DataFrame:
    """Two seeds of three optimizers; SPS's cap_bound_share `sps_share` at every log point
    after step 0 but the last of seed 1, which is 0.5 where sps_share is not 1."""
    rows = []
    for opt in OPTIMIZERS:
        for seed in (0, 1):
            for step in STEPS:
                rows.append((opt, seed, step, "train_loss", 2.0 - 0.01 * step))
                rows.append((opt, seed, step, "test_accuracy", 0.5 + 0.001 * step))
                if opt == "sgd":
                    continue
                share = sps_share if opt == "sps" else sngd_share
                if opt == "sps" and sps_share != 1 and seed == 1 and step == STEPS[-1]:
                    share = 0.5
                rows.append((opt, seed, step, "cap_bound_share", np.nan if step == 0 else share))
    return pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])


def _drawn_legend(monkeypatch, tmp_path, legend, table) -> list[str]:
    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, *a, **k: drawn.append(fig))
    plots.draw_training(
        table, title="t", legend=legend, algorithms={n: n for n in legend},
        caption="c", fixture=False, outputs=[tmp_path / "f.pdf"],
    )  # fmt: skip
    texts = [t.get_text() for t in drawn[0].legends[0].get_texts()]
    plt.close(drawn[0])
    return texts


def test_the_legend_and_the_caption_name_a_run_whose_cap_bound_at_every_step(monkeypatch, tmp_path):
    bound = plots.run_legend(LEGEND, OPTIMIZERS, run_table(1.0))
    assert bound["sps"] == ("SPS (cap bound at every step: SGD with lr 0.1)", "SPS ...")
    assert bound["sgd"] == LEGEND["sgd"] and bound["sngd"] == LEGEND["sngd"]
    assert plots.run_legend(LEGEND, OPTIMIZERS, run_table(0.5)) == LEGEND
    texts = _drawn_legend(monkeypatch, tmp_path, bound, run_table(1.0))
    assert "SPS (cap bound at every step: SGD with lr 0.1)" in texts
    assert "SPS" in _drawn_legend(monkeypatch, tmp_path, LEGEND, run_table(0.5))
    settings = {"train": {"epochs": 1, "batch_size": 16, "log_every": 16}, "seeds": 2,
                "dataset": "rotten_tomatoes"}  # fmt: skip
    source = {"datasets": [{"name": "Rotten Tomatoes", "path": "data/rt"}]}
    caption = plots.training_caption(settings, bound, source)
    assert "SPS (cap bound at every step: SGD with lr 0.1): SPS ..." in caption


def test_the_figure_job_draws_and_captions_with_the_runs_legend():
    script = (REPO / "workflow/scripts/figure_real.py").read_text()
    assert "plots.run_legend(" in script
    # the config's legend is read once, into run_legend: figure and caption take its result
    assert script.count("snakemake.params.legend") == 1
