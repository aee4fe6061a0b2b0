"""AttentionMD's local-convergence figure (attnbias.figures.neighbours_local_figures): print
size, fonts, the diagonal's verdict with a control, and a caption of measured numbers."""

from __future__ import annotations

import pandas as pd
from pdf_text import body_sizes, font_sizes, page_inches

from attnbias.figures import neighbours_local_figures, style


def _summary(swap=False, seeds=3):
    table = {"1.75": {"1.75": 1e-3, "2.0": 9e-3, "3.0": 7e-2},
             "2.0": {"1.75": 9e-3, "2.0": 2e-3, "3.0": 4e-2},
             "3.0": {"1.75": 1e-1, "2.0": 5e-2, "3.0": 1e-2}}  # fmt: skip
    if swap:  # the control: run p = 3 closer to the l_2 SVM than to its own
        table["3.0"]["2.0"] = 1e-3
    return {"mean_divergence": table, "runs": 3 * seeds, "not_globally_optimal": 2,
            "not_locally_optimal": 0, "seeds": seeds, "n": 6, "T": 8, "d": 10,
            "p": [1.75, 2, 3], "epochs": [1500, 2000, 20000], "lr": 0.1}  # fmt: skip


def _check_print(pdf):
    width, height = page_inches(pdf)
    assert width <= style.FULL_WIDTH + 0.01 and height <= style.MAX_HEIGHT
    assert min(body_sizes(font_sizes(pdf))) >= style.MIN_FONT_PT


def _curves():
    rows = [{"seed": s, "p": p, "iteration": t, "divergence": 1.0 / t}
            for s in (1, 2) for p in (1.75, 2.0, 3.0) for t in (1, 10, 100)]  # fmt: skip
    return pd.DataFrame(rows)


def test_own_is_smallest_reads_the_diagonal():
    assert neighbours_local_figures.own_is_smallest(_summary()) == [True, True, True]
    assert neighbours_local_figures.own_is_smallest(_summary(swap=True)) == [True, True, False]


def test_the_figure_prints_at_size_with_the_measured_numbers(tmp_path):
    outputs = [tmp_path / "l.pdf", tmp_path / "l.caption.md"]
    neighbours_local_figures.draw_local(_curves(), _summary(swap=True), outputs=outputs)
    _check_print(outputs[0])
    text = outputs[1].read_text()
    assert "2 of 3 rows smallest on the diagonal" in text
    assert "Of 9 runs, 2 end on tokens other than argmax" in text
    assert "3 seeds, fewer than their 100" in text
    assert "unseeded" in text and "formed in logs" in text


def test_their_seed_count_is_said_as_theirs(tmp_path):
    outputs = [tmp_path / "l.pdf", tmp_path / "l.caption.md"]
    neighbours_local_figures.draw_local(_curves(), _summary(seeds=100), outputs=outputs)
    assert "100 seeds, as theirs" in outputs[1].read_text()


def _tfsvm_summary(seeds=2):
    return {"mean_correlation": {"W": {"fro": 0.9988, "nuclear": 0.88},
                                 "KQ": {"fro": 0.87, "nuclear": 0.9975}},
            "runs": 2 * seeds, "not_globally_optimal": 1, "not_locally_optimal": 0,
            "seeds": seeds, "n": 6, "T": 8, "d": 10, "lr": 0.1, "iterations": 2000}  # fmt: skip


def _tfsvm_curves():
    rows = [{"seed": s, "param": p, "norm": n, "iteration": t, "correlation": 1 - 1 / (t + 1)}
            for s in (0, 1) for p in ("W", "KQ") for n in ("fro", "nuclear")
            for t in (0, 1, 10, 100)]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_tfsvm_figure_prints_at_size_with_the_measured_numbers(tmp_path):
    outputs = [tmp_path / "t.pdf", tmp_path / "t.caption.md"]
    neighbours_local_figures.draw_tfsvm(_tfsvm_curves(), _tfsvm_summary(), outputs=outputs)
    _check_print(outputs[0])
    text = outputs[1].read_text()
    assert "0.9988 (Frobenius), 0.8800 (nuclear)" in text
    assert "Of 4 runs, 1 end on tokens other than argmax" in text
    assert "2 seeds, fewer than their 100" in text
