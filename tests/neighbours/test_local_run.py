"""AttentionMD's local-convergence runs (attnbias.neighbours.local_run): their seeds' data,
the divergence falling to each run's own SVM, the (run p, SVM p) table and the counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.data import models
from attnbias.neighbours import local_run, local_tokens

SMALL = {"seeds": 2, "n": 4, "T": 5, "d": 6, "p": [1.75, 2], "epochs": [300, 300],
         "lr": 0.1, "log_points": 12}  # fmt: skip


@pytest.fixture(scope="module")
def small_run():
    return local_run.run(SMALL)


def test_seeds_are_theirs_from_1(small_run):
    curves, finals = small_run
    assert sorted(finals["seed"].unique()) == [1, 2]
    data = models.generate("cross_gaussian", 2, local_run.data_params(SMALL))
    assert data["W0"].std() > 0.5  # W0 ~ N(0, 1), not their single run's 0


def test_one_final_row_per_run_and_svm(small_run):
    curves, finals = small_run
    assert len(finals) == 2 * 2 * 2  # seeds x run p x SVM p
    assert set(curves["p"]) == {1.75, 2.0}


def test_the_divergence_to_the_own_svm_falls(small_run):
    curves, _ = small_run
    for (_, _), rows in curves.groupby(["seed", "p"]):
        rows = rows.sort_values("iteration")
        assert rows["divergence"].iloc[-1] < rows["divergence"].iloc[0] / 3


def test_the_tokens_are_those_the_last_w_selects(small_run):
    _, finals = small_run
    row = finals[(finals["seed"] == 1) & (finals["p"] == 2.0)].iloc[0]
    data = models.generate("cross_gaussian", 1, local_run.data_params(SMALL))
    W = local_run._run(data, 2.0, 0.1, 300, np.array([0, 300]))[-1]
    found = local_tokens.selected_tokens(data, W) + 1
    assert row["tokens"] == " ".join(map(str, found))
    best = np.array_equal(found - 1, data["opt"])
    assert bool(row["globally_optimal"]) == best


def _finals(globally=(True, True, False), locally=(True, True, True)):
    rows = []
    for seed, (g, ok) in enumerate(zip(globally, locally, strict=True), start=1):
        for q, value in ((2.0, 0.01), (3.0, 0.1)):
            rows.append({"seed": seed, "p": 2.0, "svm_p": q, "divergence": value * seed,
                         "globally_optimal": g, "locally_optimal": ok})  # fmt: skip
    return pd.DataFrame(rows)


def test_summary_means_over_seeds_and_counts_runs():
    found = local_run.summary(_finals())
    assert found["mean_divergence"]["2.0"]["3.0"] == pytest.approx(0.2)
    assert found["runs"] == 3 and found["seeds"] == 3
    assert found["not_globally_optimal"] == 1 and found["not_locally_optimal"] == 0
    control = local_run.summary(_finals(globally=(True,) * 3, locally=(False, True, True)))
    assert control["not_globally_optimal"] == 0 and control["not_locally_optimal"] == 1


def test_one_epochs_entry_per_p_or_refused():
    with pytest.raises(ValueError, match="attentionmd_local: give one epochs entry per p"):
        local_run.run(SMALL | {"epochs": [300]})
