"""A real-data run whose cap bound at every step on every seed (attnbias.realdata.cap_bound)
is drawn and captioned as the SGD it became; a run whose cap bound at only some steps keeps
its own name."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from project import REPO

from attnbias.realdata import cap_bound, plots

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


def test_bound_throughout_needs_every_log_point_of_every_seed():
    assert cap_bound.bound_throughout(run_table(1.0), "sps")
    assert not cap_bound.bound_throughout(run_table(0.9), "sps")
    assert not cap_bound.bound_throughout(run_table(1.0), "sngd")  # share 0
    assert not cap_bound.bound_throughout(run_table(1.0), "sgd")  # no cap logged
    one_seed = run_table(1.0)
    seed_1 = (one_seed["seed"] == 1) & (one_seed["metric"] == "cap_bound_share")
    one_seed.loc[seed_1, "value"] = np.nan  # seed 1 logged no share: not read as bound
    assert not cap_bound.bound_throughout(one_seed, "sps")


@pytest.mark.parametrize(
    "settings, plain",
    [
        (OPTIMIZERS["sps"], "SGD with lr 0.1"),
        (OPTIMIZERS["sngd"], "SGD with lr 100"),
        (
            {"rule": "sngd", "lr": 1.0, "max_step": 0.5, "momentum": 0.9},
            "SGD with lr 0.5, momentum 0.9",
        ),
        (OPTIMIZERS["sgd"], None),
        ({"rule": "sngd", "lr": 1.0}, None),
    ],
)
def test_what_a_capped_run_becomes(settings, plain):
    assert cap_bound.became(settings) == plain


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
    assert "plots.run_legend(" in script and "cap_bound.caption_text(" in script
    # the config's legend is read once, into run_legend: figure and caption take its result
    assert script.count("snakemake.params.legend") == 1


def test_bound_steps_weigh_each_share_by_its_window():
    """Windows of 16 steps: seed 0's share 15/16 at 4 log points is 60 of 64 steps; seed 1's
    last window at 1/2 gives 45 + 8. A last window shorter than the others counts its own
    steps; a run without a cap has no count."""
    table = run_table(15 / 16)
    counts = cap_bound.bound_steps(table, "sps")
    assert counts.to_dict("index") == {0: {"bound": 60, "steps": 64}, 1: {"bound": 53, "steps": 64}}
    assert cap_bound.bound_text(table, "sps") == (
        "cap bound at 113 of 128 steps (seeds 0, 1: 60, 53 of 64)"
    )
    assert cap_bound.bound_text(table, "sgd") is None and cap_bound.bound_steps(table, "sgd").empty
    short = table[table["iteration"] <= 48].copy()
    short.loc[short["iteration"] == 48, "iteration"] = 40  # a last window of 8 steps
    assert cap_bound.bound_steps(short, "sps")["steps"].tolist() == [40, 40]


def test_the_caption_says_at_how_many_steps_each_cap_bound():
    table = run_table(15 / 16, sngd_share=0.0)
    caps = cap_bound.caption_text(OPTIMIZERS, table)
    assert caps == (
        "SNGD's cap bound at 0 of 128 steps (seeds 0, 1: 0, 0 of 64): a bound step is SGD "
        "with lr 100's. SPS's cap bound at 113 of 128 steps (seeds 0, 1: 60, 53 of 64): a "
        "bound step is SGD with lr 0.1's."
    )
    settings = {"train": {"epochs": 1, "batch_size": 16, "log_every": 16}, "seeds": 2,
                "dataset": "rotten_tomatoes"}  # fmt: skip
    source = {"datasets": [{"name": "Rotten Tomatoes", "path": "data/rt"}]}
    caption = plots.training_caption(settings, LEGEND, source, caps)
    assert caption.endswith("Optimizers: SGD: SGD lr=0.1; SNGD: SNGD ...; SPS: SPS .... " + caps)
    assert cap_bound.caption_text({"sgd": OPTIMIZERS["sgd"]}, table) == ""
