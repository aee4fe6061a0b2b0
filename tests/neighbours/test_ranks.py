"""SVM ranks at a relative threshold, infeasible instances counted apart
(attnbias.neighbours.ranks)."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.data import models
from attnbias.neighbours import ranks


def test_rank_is_read_relative_to_the_largest_singular_value():
    """diag(1, 1e-3, 1e-5, 1e-8): rank 2 at 1e-4 sigma_1. Control: an absolute 1e-7 (theirs)
    counts 1e-5 too, and on a matrix scaled by 100 counts the 1e-8 one as well."""
    S = np.diag([1.0, 1e-3, 1e-5, 1e-8])
    assert ranks.svm_rank(S) == 2 == ranks.svm_rank(100 * S)
    assert np.linalg.matrix_rank(S, tol=1e-7) == 3
    assert np.linalg.matrix_rank(100 * S, tol=1e-7) == 4
    with pytest.raises(ValueError, match="relative rank threshold"):
        ranks.svm_rank(S, relative=0.0)
    with pytest.raises(ValueError, match="zero matrix"):
        ranks.svm_rank(np.zeros((2, 2)))


def test_infeasible_instances_are_counted_and_never_ranked():
    """d = 1 (tokens +-1: two equal to the selected one leave no W): infeasible, counted;
    d = 6: ranked, the nuclear SVM's rank at most the Frobenius one's."""
    instances = {
        f"d={d} seed {s}": models.generate("cross_gaussian", s, dict(n=3, T=4, d=d))
        for d in (1, 6)
        for s in (0, 1)
    }
    found = ranks.count_ranks(instances)
    assert found.infeasible == ["d=1 seed 0", "d=1 seed 1"]
    assert found.feasible == 2
    assert all(1 <= r <= 3 for r in found.ranks["fro"] + found.ranks["nuclear"])
    for fro, nuclear in zip(found.ranks["fro"], found.ranks["nuclear"], strict=True):
        assert nuclear <= fro
    assert np.isnan(ranks.count_ranks({"d=1": instances["d=1 seed 0"]}).mean("fro"))
