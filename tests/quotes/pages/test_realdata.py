"""docs/real-data.md's registry (attnbias.quotes.pages.realdata) read on a hand-made real-data
table: the mean over seeds at the last step, and the cap's bound steps summed over seeds;
a figure not built is "not built", naming its target."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.quotes.build import Build, Unbuilt
from attnbias.quotes.pages.realdata import NUMBERS


def _build(tmp_path) -> Build:
    rows = []
    for seed, final in ((1, 0.5), (2, 0.7)):
        for step, loss, share in ((0, np.nan, np.nan), (40, 0.9, 1.0), (80, final, 0.5)):
            rows.append(("fig1_minilm", "sps", seed, step, "train_loss", loss))
            rows.append(("fig1_minilm", "sps", seed, step, "cap_bound_share", share))
    table = pd.DataFrame(rows, columns=["experiment", "optimizer", "seed", "iteration", "metric",
                                        "value"]).dropna()  # fmt: skip
    (tmp_path / "fig1_minilm").mkdir()
    table.to_parquet(tmp_path / "fig1_minilm" / "metrics.parquet")
    return Build(tmp_path)


def test_the_numbers_read_the_figures_table(tmp_path):
    build = _build(tmp_path)
    assert NUMBERS["fig1_minilm.sps.loss"].read(build) == pytest.approx(0.6)
    assert NUMBERS["fig1_minilm.sps.cap.bound"].read(build) == 2 * (40 + 20)
    assert NUMBERS["fig1_minilm.sps.cap.steps"].read(build) == 2 * 80
    assert all(s.target and s.target.startswith("results/fig") for s in NUMBERS.values())
    with pytest.raises(Unbuilt):
        NUMBERS["fig4_minilm.sgd.loss"].read(build)
