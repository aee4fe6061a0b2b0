"""The W-SVM of chosen tokens for self- and cross-attention (attnbias.neighbours.svms)."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.data import models
from attnbias.neighbours import svms
from attnbias.svm import local_optimality, norms


@pytest.mark.parametrize("norm", ["fro", "nuclear", "l3"])
def test_cross_attention_svm_meets_the_cross_constraints(norm):
    """Solved through the self-attention problem with the same constraints: the solution's
    margins with the queries Z are its reported ones, smallest exactly 1. Control: the
    self-attention SVM of the same tokens (queries x_{i,1}) breaks some cross constraint."""
    data = models.generate("cross_gaussian", 1, dict(n=4, T=5, d=6))
    solution = svms.w_svm(data, data["opt"], norm)
    margins = local_optimality.margins(data, data["opt"], solution.solution)
    np.testing.assert_allclose(margins, solution.margins, rtol=0, atol=1e-12)
    assert abs(margins.min() - 1) < 1e-12
    self_attention = {k: v for k, v in data.items() if k != "Z"}
    other = svms.w_svm(self_attention, data["opt"], norm).solution
    assert local_optimality.margins(data, data["opt"], other).min() < 0.99


def test_self_attention_is_svm_norms_own_problem():
    data = models.generate("example1", 0, dict(n=4, T=3, d=8))
    ours = svms.w_svm(data, data["opt"], "fro").solution
    direct = norms.solve_w_svm_norm(data["X"], data["opt"], "fro").solution
    np.testing.assert_array_equal(ours, direct)


def test_the_translation_keeps_constraints_and_order():
    """as_self_attention: sample i's first token is z_i and selected; the differences with
    the others are x_{i,alpha_i} - x_{i,t}, t != alpha_i, in order."""
    rng = np.random.default_rng(0)
    X, Z, tokens = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 3)), np.array([2, 0])
    Xs, chosen = svms.as_self_attention(X, Z, tokens)
    np.testing.assert_array_equal(chosen, [0, 0])
    np.testing.assert_array_equal(Xs[:, 0], Z)
    samples, positions = local_optimality.constraint_index(tokens, 4)
    np.testing.assert_array_equal(positions, [0, 1, 3, 1, 2, 3])
    diffs = (Xs[:, :1] - Xs[:, 1:]).reshape(-1, 3)
    expected = X[samples, tokens[samples]] - X[samples, positions]
    np.testing.assert_allclose(diffs, expected, atol=1e-15)


def test_bad_queries_and_tokens_are_refused():
    data = models.generate("cross_gaussian", 0, dict(n=3, T=4, d=5))
    with pytest.raises(ValueError, match=r"Z must have shape \(n, d\) = \(3, 5\)"):
        svms.w_svm({**data, "Z": data["Z"][:, :4]}, data["opt"], "fro")
    with pytest.raises(ValueError, match="one token index in"):
        svms.w_svm(data, np.array([0, 4, 1]), "fro", name="run 3")
