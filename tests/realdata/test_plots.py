"""Real-data figures (attnbias.realdata.plots): the legend and caption of a capped run."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from capped_runs import OPTIMIZERS, run_table
from project import REPO

from attnbias.figures.overlap import ALMOST
from attnbias.realdata import plots

LEGEND = {"sgd": ("SGD", "SGD lr=0.1"), "sngd": ("SNGD", "SNGD ..."), "sps": ("SPS", "SPS ...")}


def _drawn_legend(monkeypatch, tmp_path, legend, table) -> list[str]:
    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, *a, **k: drawn.append(fig))
    plots.draw_training(
        table, title="t", legend=legend, algorithms={n: n for n in legend},
        caption="c", fixture=False, outputs=[tmp_path / "f.pdf"],
    )  # fmt: skip
    # a long label is wrapped to fit two to a line: its words, not its line breaks
    texts = [" ".join(t.get_text().split()) for t in drawn[0].legends[0].get_texts()]
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


def _cosine_histogram(identical: int, near: int) -> pd.DataFrame:
    """A similarity job's histogram (2000 bins on [-1, 1]): 1000 pairs at 0, `near` at
    0.995, and the `identical` pairs of one token twice at 1 (the last bin)."""
    edges = np.linspace(-1.0, 1.0, 2001)
    counts = np.zeros(2000, dtype=np.int64)
    counts[1000], counts[1997], counts[1999] = 1000, near, identical
    pairs = int(counts.sum())
    return pd.DataFrame(
        {"lo": edges[:-1], "hi": edges[1:], "count": counts, "texts": 10, "pairs": pairs,
         "identical_pairs": identical, "band": 0.1, "within_band": 1000 / pairs}
    )  # fmt: skip


def test_the_bar_at_cos_1_is_said_to_be_one_token_twice():
    """fig10_minilm's spike at cos = 1 was unexplained: it is exactly the pairs of one token
    twice (41,794 and 40,740 of them, every pair above 0.99 on both corpora)."""
    note = plots.identical_note(_cosine_histogram(identical=30, near=0))
    assert "the bar at cos = 1 is its 30 pairs (2.9%) of one token twice" in note
    assert "with 0 other pairs above 0.99" in note
    # the control: distinct tokens near 1 are counted apart
    assert "with 5 other pairs above 0.99" in plots.identical_note(_cosine_histogram(30, 5))


def test_similarity_panels_are_titled_by_the_datasets_names():
    """They were titled by config keys (rotten_tomatoes)."""
    assert plots.dataset_title("rotten_tomatoes") == "Rotten Tomatoes snippets"
    assert plots.dataset_title("sms_spam") == "SMS spam"
    assert plots.dataset_title("mnli") == "MNLI"
    assert plots.dataset_title("unknown") == "unknown"
    from attnbias.realdata import packaged_text

    for key, dataset in packaged_text.DATASETS.items():  # the packaged corpora's own titles
        assert plots.DATASET_TITLES[key] == dataset.title


def test_the_caption_names_the_reported_seeds_and_where_the_settings_were_tuned():
    settings = {"train": {"epochs": 1, "batch_size": 16, "log_every": 16}, "seeds": 5,
                "first_seed": 1, "dataset": "rotten_tomatoes"}  # fmt: skip
    source = {"datasets": [{"name": "Rotten Tomatoes", "path": "data/rt"}]}
    tuning = {"seed": 0, "sweeps": ["fig1_minilm_lr"], "rule": "probe_area", "state": "checked"}
    caption = plots.training_caption(settings, LEGEND, source, tuning=tuning)
    assert "mean over 5 seeds (1 to 5)" in caption
    assert (
        "Settings chosen by probe_area on seed 0 (fig1_minilm_lr, checked against its record); "
        "seed 0 is never reported; probe_area: per update rule" in caption
    )
    assert "lowest mean probe loss" in caption
    assert "Settings" not in plots.training_caption(settings, LEGEND, source)  # the control
    # no record in the results folder: as configured, no rule claimed
    missing = {**tuning, "state": "not built", "records": ["results/fig1_minilm_lr_final.csv"]}
    caption = plots.training_caption(settings, LEGEND, source, tuning=missing)
    assert caption.endswith(
        " Settings as configured: their sweep fig1_minilm_lr is not in this results folder "
        "(snakemake results/fig1_minilm_lr_final.csv)."
    )
    assert "chosen by" not in caption and "lowest mean probe loss" not in caption


def test_the_probe_loss_the_races_read_has_its_panel_and_caption(monkeypatch, tmp_path):
    """Where the runs log the probe loss, the figure draws it (the quantity of the races and
    of the tuning rule) and the caption says what it is; without it, neither (the control)."""
    table = run_table(0.5)
    probe = table[table["metric"] == "train_loss"].assign(metric="probe_loss")
    drawn = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, *a, **k: drawn.append(fig))
    for data in (pd.concat([table, probe]), table):
        plots.draw_training(
            data, title="t", legend=LEGEND, algorithms={n: n for n in LEGEND},
            caption="c", fixture=False, outputs=[tmp_path / "f.pdf"],
        )  # fmt: skip
    labels = [[ax.get_ylabel() for ax in fig.axes] for fig in drawn]
    assert "probe loss (fixed training subset)" in labels[0]
    assert "probe loss (fixed training subset)" not in labels[1]
    for fig in drawn:
        plt.close(fig)
    settings = {"train": {"epochs": 1, "batch_size": 16, "log_every": 16, "probe_samples": 256},
                "seeds": 5, "first_seed": 1, "dataset": "rotten_tomatoes"}  # fmt: skip
    source = {"datasets": [{"name": "Rotten Tomatoes", "path": "data/rt"}]}
    caption = plots.training_caption(settings, LEGEND, source)
    assert "probe loss: the loss on a fixed subset of 256 training samples" in caption
    del settings["train"]["probe_samples"]
    assert "probe loss" not in plots.training_caption(settings, LEGEND, source)


def test_a_crowded_panels_coinciding_curves_are_named_in_the_caption(monkeypatch, tmp_path):
    """A sweep's runs that cover each other are named in the caption, not over the data
    (more than MOST_NAMED_IN_PANEL in a panel); the control: three are named in it."""

    def drawn(runs: int) -> tuple[list[str], str]:
        legend = {f"sgd-{k}": (f"SGD lr {k}", "SGD") for k in range(runs)}
        one = run_table(0.5).query("optimizer == 'sgd'")
        table = pd.concat([one.assign(optimizer=name) for name in legend])
        saved = {}
        monkeypatch.setattr(plots, "save_figure", lambda fig, *a, caption: saved.update(
            fig=fig, caption=caption))  # fmt: skip
        plots.draw_training(
            table, title="t", legend=legend, algorithms=dict.fromkeys(legend, "sgd"),
            caption="c", fixture=False, outputs=[tmp_path / "f.pdf"],
        )  # fmt: skip
        notes = [t.get_text() for ax in saved["fig"].axes if ax.get_legend()
                 for t in ax.get_legend().get_texts()]  # fmt: skip
        plt.close(saved["fig"])
        return notes, saved["caption"]

    notes, caption = drawn(3)
    assert any(ALMOST in note for note in notes) and "too many to name" not in caption
    notes, caption = drawn(plots.MOST_NAMED_IN_PANEL + 2)
    assert not any(ALMOST in note for note in notes)
    assert f"too many to name in the panels: SGD lr 0{ALMOST}SGD lr 1" in caption
