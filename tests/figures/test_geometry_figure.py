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
