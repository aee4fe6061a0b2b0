"""The geometry figure with an optimizer that no published result places (its rule names
no implicit_norm, optim.expected_norm gives None): its row of the matrix has no framed
cell, panel (b) has no own-norm curve for it, and the caption says so; sign descent, the
control, keeps its framed cell and curve."""

from __future__ import annotations

from geometry_tables import NORMS, geometry_table

from attnbias.figures import geometry_figure

SETTINGS = {
    "geo": {
        "title": "geo", "description": "Toy data.", "data": {"model": "dm", "params": {"n": 4}},
        "train": {"train_u": False, "iterations": 1000, "loss": "exponential"},
        "seeds": 2, "first_seed": 0, "norms": list(NORMS), "order": ["sign", "new"],
        "labels": {"sign": "sign descent", "new": "new rule"},
        "expected": {"sign": "max", "new": None},
        "settings": {"sign": "sign descent lr=0.01", "new": "new rule"},
    }
}  # fmt: skip


def test_an_optimizer_with_no_expected_norm_has_no_frame_and_says_so(tmp_path):
    final = {o: {n: 0.9 if n == "max" else 0.5 for n in NORMS} for o in ("sign", "new")}
    table = geometry_table(final, {"sign": 0.9, "new": 0.9})
    outputs = [tmp_path / "geometry.png", tmp_path / "geometry.caption.md"]
    text = geometry_figure.draw({"geo": table}, SETTINGS, {"sign": "sign", "new": "sign"}, outputs)
    assert "new rule: no published expected norm, none framed (best: max, 0.899)" in text
    assert "sign descent: 0.899 with its max solution (best: max, 0.899)" in text  # control
    assert (tmp_path / "geometry.png").stat().st_size > 10_000


def _with_tokens(table, moved: dict, local: dict):
    """`table` with each run's opt_moved and tokens_locally_optimal ({(opt, seed): value})
    at every logged t, as a `tokens: selected` run logs them."""
    import pandas as pd

    runs = table[["experiment", "optimizer", "seed", "iteration"]].drop_duplicates()
    keys = list(zip(runs.optimizer, runs.seed, strict=True))
    extra = [
        runs.assign(metric=name, value=[values[key] for key in keys])
        for name, values in (("opt_moved", moved), ("tokens_locally_optimal", local))
    ]
    return pd.concat([table, *extra], ignore_index=True)


def test_three_experiments_fit_a_page_and_a_selected_tokens_row_names_each_run_s_tokens(tmp_path):
    """Self- and cross-attention maps, three rows: the figure stays within the page
    (style.MAX_HEIGHT), the cross-attention row says so, and its caption names every run
    whose selected tokens are not globally optimal, locally optimal or not; the control: a
    row of the data's optimal tokens (the default) says nothing of selected tokens."""
    from PIL import Image

    from attnbias.figures import style

    final = {o: {n: 0.9 if n == "max" else 0.5 for n in NORMS} for o in ("sign", "new")}
    plain = geometry_table(final, {"sign": 0.9, "new": 0.9})
    runs = [(o, s) for o in ("sign", "new") for s in (0, 1)]
    moved = dict.fromkeys(runs, 0.0) | {("sign", 1): 2.0, ("new", 0): 1.0}
    local = dict.fromkeys(runs, 1.0) | {("new", 0): 0.0}
    cross = _with_tokens(plain, moved, local)
    settings = {
        "a": SETTINGS["geo"],
        "b": SETTINGS["geo"],
        "c": dict(SETTINGS["geo"], tokens="selected", attention="cross",
                  data={"model": "cross_gaussian", "params": {"n": 6}}),
    }  # fmt: skip
    outputs = [tmp_path / "geometry.png", tmp_path / "geometry.caption.md"]
    text = geometry_figure.draw(
        {"a": plain, "b": plain, "c": cross}, settings, {"sign": "sign", "new": "sign"}, outputs
    )
    assert "globally optimal on 2 of 4 runs" in text
    assert "locally, not globally optimal (Tarzanagh et al.'s check) on sign descent seed 1" in text
    assert "not locally optimal on new rule seed 0 (1 sequence(s))" in text
    assert "cross-attention (queries z_i apart from the tokens)" in text
    assert text.count("tokens its own attention selects") == 1  # the control rows: none
    width, height = Image.open(tmp_path / "geometry.png").size
    dpi = 150  # save.py's PNG resolution
    assert height / dpi <= style.MAX_HEIGHT + 0.05 and width / dpi <= style.FULL_WIDTH + 0.05
