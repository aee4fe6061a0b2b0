"""TF-as-SVM's local-convergence runs (attnbias.neighbours.tfsvm_local): their seeds'
data, their two parametrisations, each run's correlation with the SVMs of its tokens."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.data import models
from attnbias.neighbours import tfsvm_local

SMALL = {"seeds": 2, "n": 4, "T": 5, "d": 6, "lr": 0.1, "iterations": 1000, "log_points": 12}


@pytest.fixture(scope="module")
def small_run():
    return tfsvm_local.run(SMALL)


def test_their_settings_as_the_rules_take_them():
    (w_init, ngd), (kq_init, kq) = tfsvm_local.parametrizations(0.1).values()
    assert (w_init, ngd.rule, ngd.lr) == ("linear", "ngd", 0.1)
    assert (kq_init, kq.rule, kq.dual_normalize, kq.init) == ("zero", "kq", "per_block", "linear")
    assert kq.ridge == 2.0**-52  # their eps = torch.finfo(torch.double).eps


def test_seeds_from_0_and_one_row_per_run(small_run):
    curves, finals = small_run
    assert sorted(finals["seed"].unique()) == [0, 1] and len(finals) == 2 * 2
    assert set(curves["norm"]) == {"fro", "nuclear"} and set(curves["param"]) == {"W", "KQ"}


def test_w_starts_at_the_data_draw(small_run):
    curves, _ = small_run
    data = models.generate("cross_gaussian", 0, {"init": "linear", "n": 4, "T": 5, "d": 6})
    assert np.abs(data["W0"]).max() <= 1 / np.sqrt(6)  # nn.Linear's bound
    start = curves[(curves["seed"] == 0) & (curves["param"] == "W") & (curves["iteration"] == 0)]
    assert len(start) == 2 and np.all(np.abs(start["correlation"]) < 0.9)


def test_each_parametrisation_nearer_its_own_svm(small_run):
    _, finals = small_run
    w, kq = finals[finals["param"] == "W"], finals[finals["param"] == "KQ"]
    assert np.all(w["corr_fro"] > w["corr_nuclear"])  # GD on W: the Frobenius SVM
    assert np.all(kq["corr_nuclear"] > kq["corr_fro"])  # GD on K, Q: the nuclear SVM


def test_summary_means_and_counts():
    finals = pd.DataFrame({
        "seed": [0, 0, 1, 1], "param": ["W", "KQ", "W", "KQ"],
        "corr_fro": [0.9, 0.5, 0.7, 0.3], "corr_nuclear": [0.1, 0.8, 0.3, 1.0],
        "globally_optimal": [True, True, False, True],
        "locally_optimal": [True, False, True, True],
    })  # fmt: skip
    found = tfsvm_local.summary(finals)
    assert found["mean_correlation"]["W"]["fro"] == pytest.approx(0.8)
    assert found["mean_correlation"]["KQ"]["nuclear"] == pytest.approx(0.9)
    assert found["runs"] == 4 and found["seeds"] == 2
    assert found["not_globally_optimal"] == 1 and found["not_locally_optimal"] == 1
