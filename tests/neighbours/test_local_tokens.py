"""The tokens a run ends on and Tarzanagh et al.'s check (attnbias.neighbours.local_tokens),
on an instance solved by hand."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.data import models
from attnbias.neighbours import local_tokens, svms
from attnbias.svm import local_optimality

# One sample, self-attention: query x_1 = (0, 1), x_2 = (1, 0), x_3 = (3, 0). Selecting
# x_3, the W-SVM is W = w x_1^T with w the least-norm vector meeting (3, -1).w >= 1 and
# (2, 0).w >= 1: w = (1/2, 0), where the first margin is 3/2 and the second 1, so the
# support of alpha = 3 is {x_2} alone.
HAND = {"X": np.array([[[0.0, 1.0], [1.0, 0.0], [3.0, 0.0]]]), "y": np.array([1.0])}


@pytest.mark.parametrize(
    "decoder, verdict, violations, best",
    [
        ([1.0, 0.0], "globally optimal tokens", (), True),  # gamma = (0, 1, 3)
        ([1.0, 10.0], "locally (not globally) optimal tokens", (), False),  # (10, 1, 3)
        ([-1.0, 0.0], "not locally optimal", ((0, 1),), False),  # (0, -1, -3)
    ],
)
def test_the_check_by_hand(decoder, verdict, violations, best):
    data = {**HAND, "u": np.array(decoder)}
    found = local_tokens.check(data, [2])
    assert [list(s) for s in found.support] == [[1]]
    assert found.violations == violations
    assert found.globally_optimal is best
    assert found.locally_optimal is (not violations)
    assert found.verdict().startswith(verdict)


def test_the_selected_tokens_are_the_softmaxs_at_the_last_iterate():
    """Along a W-SVM's direction the softmax selects its tokens; a trained decoder's
    scores come from the run's final u (these data have none of their own)."""
    data = models.generate("cross_gaussian", 2, dict(n=5, T=6, d=8))
    other = (data["opt"] + 1) % 6  # tokens other than the globally optimal ones
    W = 5.0 * svms.w_svm(data, other, "fro").solution
    np.testing.assert_array_equal(local_tokens.selected_tokens(data, W), other)
    scores = local_tokens.attention_scores(data, W)
    gaps = scores[np.arange(5), other][:, None] - scores  # 5 times the SVM's margins
    assert np.sort(gaps, axis=1)[:, 1].min() > 5 - 1e-9  # [:, 0]: the token itself, 0
    found = local_tokens.check(data, other)
    assert not found.globally_optimal
    assert local_tokens.check(data, data["opt"]).verdict() == "globally optimal tokens"
    joint = models.generate("attentionmd_joint", 0, {})
    with pytest.raises(ValueError, match="pass the run's final u"):
        local_tokens.check(joint, joint["opt"])
    assert local_tokens.check(joint, joint["opt"], decoder=np.array([1.0, 1.0])).svm_norm == "fro"


def test_run_svms_are_those_of_the_selected_tokens():
    data = models.generate("cross_gaussian", 2, dict(n=5, T=6, d=8))
    other = (data["opt"] + 1) % 6
    W = svms.w_svm(data, other, "fro").solution
    found = local_tokens.run_svms(data, W, ["fro", "nuclear"])
    np.testing.assert_allclose(found["fro"].solution, W, atol=1e-9)
    margins = local_optimality.margins(data, other, found["nuclear"].solution)
    assert abs(margins.min() - 1) < 1e-9


def test_a_runs_report_says_whether_it_ended_on_globally_optimal_tokens():
    data = models.generate("cross_gaussian", 2, dict(n=5, T=6, d=8))
    at_opt = 3.0 * svms.w_svm(data, data["opt"], "fro").solution
    found, solutions = local_tokens.run_report(data, at_opt, ["nuclear"], own="fro")
    assert found.verdict() == "globally optimal tokens" and set(solutions) == {"nuclear"}
    other = (data["opt"] + 1) % 6  # control: a run ending elsewhere says so
    found, _ = local_tokens.run_report(
        data, svms.w_svm(data, other, "fro").solution, ["fro"], own="fro"
    )
    assert not found.globally_optimal
    np.testing.assert_array_equal(found.tokens, other)


def test_the_check_reads_the_support_of_the_runs_own_norm():
    # TF-as-SVM's data of seed 2 and the tokens its K, Q run ends on (tfsvm_local's build):
    # sample 5's token 1 is a support token of the Frobenius SVM that outscores the
    # selected one, but not of the nuclear SVM, the norm K Q^T's bias is toward
    data = models.generate("cross_gaussian", 2, {"init": "zero", "n": 6, "T": 8, "d": 10})
    tokens = np.array([7, 6, 3, 3, 5, 5]) - 1
    W = svms.w_svm(data, tokens, "nuclear").solution
    found, _ = local_tokens.run_report(data, 5.0 * W, ["fro"], own="nuclear")
    assert found.svm_norm == "nuclear" and found.locally_optimal
    # control: the same tokens against the Frobenius support fail the check
    found, _ = local_tokens.run_report(data, 5.0 * W, ["fro"], own="fro")
    assert found.violations == ((4, 0),)
