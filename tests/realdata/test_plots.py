"""Real-data figures (attnbias.realdata.plots): the legend and caption of a capped run."""

from __future__ import annotations

import matplotlib.pyplot as plt
from capped_runs import OPTIMIZERS, run_table
from project import REPO

from attnbias.realdata import plots

LEGEND = {"sgd": ("SGD", "SGD lr=0.1"), "sngd": ("SNGD", "SNGD ..."), "sps": ("SPS", "SPS ...")}


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


def test_the_legend_and_the_caption_name_a_run_whose_cap_bound_at_most_steps(monkeypatch, tmp_path):
    bound = plots.run_legend(LEGEND, OPTIMIZERS, run_table(1.0))
    assert bound["sps"] == ("SPS (cap bound at 100% of its steps: SGD with lr 0.1)", "SPS ...")
    assert bound["sgd"] == LEGEND["sgd"] and bound["sngd"] == LEGEND["sngd"]
    assert plots.run_legend(LEGEND, OPTIMIZERS, run_table(0.5)) == LEGEND
    texts = _drawn_legend(monkeypatch, tmp_path, bound, run_table(1.0))
    assert "SPS (cap bound at 100% of its steps: SGD with lr 0.1)" in texts
    assert "SPS" in _drawn_legend(monkeypatch, tmp_path, LEGEND, run_table(0.5))
    settings = {"train": {"epochs": 1, "batch_size": 16, "log_every": 16}, "seeds": 2,
                "dataset": "rotten_tomatoes"}  # fmt: skip
    source = {"datasets": [{"name": "Rotten Tomatoes", "path": "data/rt"}]}
    caption = plots.training_caption(settings, bound, source)
    assert "SPS (cap bound at 100% of its steps: SGD with lr 0.1): SPS ..." in caption


def test_the_figure_job_draws_and_captions_with_the_runs_legend():
    script = (REPO / "workflow/scripts/figure_real.py").read_text()
    assert "plots.run_legend(" in script and "cap_bound.caption_text(" in script
    # the config's legend is read once, into run_legend: figure and caption take its result
    assert script.count("snakemake.params.legend") == 1


def test_the_caption_ends_with_what_the_caps_did():
    """The caps' sentences (realdata.cap_bound.caption_text) close the caption."""
    caps = "SPS's cap bound at 113 of 128 steps (seeds 0, 1: 60, 53 of 64): a bound step is x."
    settings = {"train": {"epochs": 1, "batch_size": 16, "log_every": 16}, "seeds": 2,
                "dataset": "rotten_tomatoes"}  # fmt: skip
    source = {"datasets": [{"name": "Rotten Tomatoes", "path": "data/rt"}]}
    caption = plots.training_caption(settings, LEGEND, source, caps)
    assert caption.endswith("Optimizers: SGD: SGD lr=0.1; SNGD: SNGD ...; SPS: SPS .... " + caps)
    assert plots.training_caption(settings, LEGEND, source).endswith("SPS: SPS ....")


def test_the_caption_names_the_reported_seeds_and_where_the_settings_were_tuned():
    settings = {"train": {"epochs": 1, "batch_size": 16, "log_every": 16}, "seeds": 5,
                "first_seed": 1, "dataset": "rotten_tomatoes"}  # fmt: skip
    source = {"datasets": [{"name": "Rotten Tomatoes", "path": "data/rt"}]}
    tuning = {"seed": 0, "sweeps": ["fig1_minilm_lr"], "rule": "probe_area"}
    caption = plots.training_caption(settings, LEGEND, source, tuning=tuning)
    assert "mean over 5 seeds (1 to 5)" in caption
    assert (
        "Settings tuned on seed 0, never reported, by fig1_minilm_lr's rule probe_area: " in caption
    )
    assert "lowest mean probe loss" in caption
    assert "tuned" not in plots.training_caption(settings, LEGEND, source)  # the control
