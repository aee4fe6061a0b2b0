"""The neighbours' figures (attnbias.figures.neighbours_figures): print size, fonts, and
captions that count the infeasible instances and print the measured numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pdf_text import body_sizes, font_sizes, page_inches

from attnbias.figures import neighbours_figures, style


def _rank_table(infeasible_d1=2):
    rows = []
    for n in (5, 10):
        for d in (1, 3, 5):
            bad = infeasible_d1 if d == 1 else 0
            ranks = float("nan") if bad == 2 else float(min(n, d))
            rows.append(
                {"n": n, "T": 5, "d": d, "instances": 2, "infeasible": bad,
                 "mean_fro": ranks, "min_fro": ranks, "max_fro": ranks,
                 "mean_nuclear": ranks / 2, "min_nuclear": ranks / 2, "max_nuclear": ranks / 2}
            )  # fmt: skip
    return pd.DataFrame(rows)


SETTINGS = {"seeds": 2, "relative_threshold": 1e-4}


def _check_print(pdf):
    width, height = page_inches(pdf)
    assert width <= style.FULL_WIDTH + 0.01 and height <= style.MAX_HEIGHT
    assert min(body_sizes(font_sizes(pdf))) >= style.MIN_FONT_PT


def test_the_rank_figure_prints_at_size_and_counts_the_infeasible(tmp_path):
    outputs = [tmp_path / "r.pdf", tmp_path / "r.caption.md"]
    neighbours_figures.draw_rank(_rank_table(), SETTINGS, outputs=outputs)
    _check_print(outputs[0])
    text = outputs[1].read_text()
    assert "4 of 12 (d=1: 4)" in text and "2 seeds per cell" in text and "1e-04 sigma_1" in text
    # the control: no infeasible instance
    caption = neighbours_figures._rank_caption(_rank_table(0), SETTINGS)
    assert "0 of 12 (none)" in caption


def test_the_rank_caption_counts_ranks_above_n():
    table = _rank_table(0)
    assert "exceeds n: 0" in neighbours_figures._rank_caption(table, SETTINGS)
    table.loc[0, "max_nuclear"] = 6.0  # n = 5
    assert "exceeds n: 1" in neighbours_figures._rank_caption(table, SETTINGS)


def test_the_joint_figure_prints_the_measured_numbers(tmp_path):
    t = np.array([0, 1, 10, 100])
    curves = pd.concat(
        pd.DataFrame({"iteration": t, "run": run, "block": block,
                      "cos": [np.nan, 0.9, 0.99, 0.999 if run == "ours" else 0.99]})
        for run in ("ours", "theirs") for block in ("W", "v")
    )  # fmt: skip
    summary = {
        "tokens": [1, 0], "their_tokens": [1, 0], "svm_norm": "fro", "p": 2, "lr": 0.1,
        "epochs": 100,
        "final_cos": {"ours_W": 0.9991234, "ours_v": 0.9995, "theirs_W": 0.99, "theirs_v": 0.98},
    }  # fmt: skip
    outputs = [tmp_path / "j.pdf", tmp_path / "j.caption.md"]
    neighbours_figures.draw_joint(curves, summary, outputs=outputs)
    _check_print(outputs[0])
    text = outputs[1].read_text()
    assert "ours cos 0.999123 (W), 0.999500 (v); theirs 0.99000 (W), 0.98000 (v)" in text
    assert "theirs ends on the same tokens" in text
    summary["their_tokens"] = [0, 0]  # the control
    assert "theirs ends on other tokens" in neighbours_figures._joint_caption(summary)
