"""The geometry runs' measures (attnbias.geometry.measures) against hand computations."""

import math

import numpy as np
import pytest

from attnbias.geometry import measures, metric_names

# two samples of two 2-D tokens, the query optimal in the first and the other token in the
# second: constraints a_k^T W b_k with a_1 = (1, -1), b_1 = (1, 0) and a_2 = (1, 1),
# b_2 = (0, 1)
DATA = {
    "X": np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 2.0]]]),
    "opt": np.array([0, 1]),
}
# a_1^T W b_1 = W00 - W10 and a_2^T W b_2 = W01 + W11: 3 and 4 here, the smallest 3
W2 = np.array([[2.0, 1.0], [-1.0, 3.0]])


def test_smallest_constraint_by_hand():
    assert measures.smallest_constraint(W2, DATA["X"], DATA["opt"]) == pytest.approx(3.0)
    assert measures.smallest_constraint(-W2, DATA["X"], DATA["opt"]) == pytest.approx(-4.0)


@pytest.mark.parametrize(
    ("norm", "value"),
    [
        ("fro", math.sqrt(4 + 1 + 1 + 9)),
        ("max", 3.0),
        ("l3", (8 + 1 + 1 + 27) ** (1 / 3)),
        # W2^T W2 = [[5, -1], [-1, 10]]: eigenvalues (15 +- sqrt(29)) / 2
        ("spectral", math.sqrt((15 + math.sqrt(29)) / 2)),
        ("nuclear", math.sqrt((15 + math.sqrt(29)) / 2) + math.sqrt((15 - math.sqrt(29)) / 2)),
    ],
)
def test_normalized_margin_by_hand(norm, value):
    got = measures.normalized_margins(W2[None], [DATA], norm)
    np.testing.assert_allclose(got, [3.0 / value], rtol=1e-12)


def test_alignment_by_hand():
    W_star = np.array([[1.0, 0.0], [0.0, 1.0]])
    # <W2, I> = 5, ||W2||_F = sqrt(15), ||I||_F = sqrt(2)
    got = measures.alignment(W2[None], W_star[None])
    np.testing.assert_allclose(got, [5 / math.sqrt(30)], rtol=1e-12)
    assert measures.alignment(-W_star[None], W_star[None])[0] == pytest.approx(-1.0)


def test_extra_metrics_batch_and_ratio():
    """Two runs (seeds) at once, each against its own solution; margin_ratio is 1 at W*."""
    W_star = np.array([[0.5, 0.5], [-0.5, 0.5]])  # both constraints 1, max norm 0.5
    solutions = [{"max": W_star, "fro": W_star}, {"max": W2, "fro": W2}]
    measure = measures.extra_metrics([DATA, DATA], solutions, ["max", "fro"])
    out = measure(np.stack([W_star, 2 * W_star]), np.zeros((2, 2)))
    assert set(out) == {f"{p}_{n}" for p in metric_names.PREFIXES for n in ("max", "fro")}
    np.testing.assert_allclose(out["align_max"][0], 1.0)
    np.testing.assert_allclose(out["margin_max"], [1 / 0.5, 2 / 1.0])  # scale-free
    # run 0 at its own solution: ratio 1; run 1 (2 W*_0) against W2's max norm 3
    np.testing.assert_allclose(out["margin_ratio_max"], [1.0, 2.0 * 3.0])
    np.testing.assert_allclose(out["align_fro"][1], measures.alignment(W_star[None], W2[None])[0])


def test_zero_matrix_measures_zero():
    """A run from W0 = 0 logs 0 at t = 0, not NaN (the backends refuse non-finite metrics)."""
    measure = measures.extra_metrics([DATA], [{"fro": W2}], ["fro"])
    out = measure(np.zeros((1, 2, 2)), np.zeros((1, 2)))
    assert all(np.all(v == 0) for v in out.values())
