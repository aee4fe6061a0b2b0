"""The neighbours' measures (attnbias.neighbours.measures), by hand and against
AttentionMD's formula restated."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnbias.neighbours import measures


def their_divergence(S, W, p):
    """AttentionMD's bregman_correlation(att_svm, W_t, p) restated: the Bregman divergence
    of ||.||_p^p / p between the l_p-normalised SVM and W (its full form)."""
    S, W = S / np.sum(np.abs(S) ** p) ** (1 / p), W / np.sum(np.abs(W) ** p) ** (1 / p)
    whole = np.sum(np.abs(S) ** p) / p + (p - 1) * np.sum(np.abs(W) ** p) / p
    return whole - np.sum(np.sign(W) * np.abs(W) ** (p - 1) * S)


def test_divergence_by_hand():
    """p = 2: 1 - cos; p = 3, W = (1, 1), S = (1, 0): 1 - 2^(-2/3)."""
    assert measures.bregman_divergence([1.0, 0.0], [1.0, 1.0], 2.0) == pytest.approx(
        1 - 1 / math.sqrt(2), rel=1e-15
    )
    assert measures.bregman_divergence([1.0, 1.0], [1.0, 0.0], 3.0) == pytest.approx(
        1 - 2 ** (-2 / 3), rel=1e-15
    )


@pytest.mark.parametrize("p", [1.75, 2.0, 3.0])
def test_divergence_is_theirs_zero_on_the_direction_and_positive_off_it(p):
    rng = np.random.default_rng(1)
    W, S = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    found = measures.bregman_divergence(W, S, p)
    assert found == pytest.approx(their_divergence(S, W, p), abs=1e-14)
    assert found > 0.1  # control: two random directions
    assert abs(measures.bregman_divergence(7.0 * S, S, p)) < 1e-14
    assert measures.bregman_divergence(3.0 * W, S, p) == pytest.approx(found, abs=1e-14)


def test_the_table_has_every_pair_with_the_runs_p():
    rng = np.random.default_rng(2)
    runs = {p: rng.standard_normal((3, 3)) for p in (1.75, 2.0, 3.0)}
    solutions = {p: rng.standard_normal((3, 3)) for p in (1.75, 2.0, 3.0)}
    table = measures.divergence_table(runs, solutions)
    assert len(table) == 9
    for (p_run, p_svm), value in table.items():
        assert value == measures.bregman_divergence(runs[p_run], solutions[p_svm], p_run)


def test_correlations_by_hand_and_refusals():
    W = np.array([[1.0, 0.0], [0.0, 0.0]])
    found = measures.svm_correlations(W, {"fro": np.eye(2), "nuclear": -W})
    assert found == pytest.approx({"fro": 1 / math.sqrt(2), "nuclear": -1.0}, rel=1e-15)
    with pytest.raises(ValueError, match="p > 1"):
        measures.bregman_divergence(W, W, 1.0)
    with pytest.raises(ValueError, match="W = 0 or S = 0"):
        measures.bregman_divergence(np.zeros((2, 2)), W, 2.0)
