"""The geometry runs' measures (attnbias.training.geometry_measures) against hand computations."""

import math

import numpy as np
import pytest
from cross_attention import cross_instance, without_queries

from attnbias.svm import uniqueness
from attnbias.svm.norms import solve_w_svm_norm
from attnbias.training import geometry_measures as measures
from attnbias.training import geometry_names

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
    assert set(out) == {f"{p}_{n}" for p in geometry_names.PREFIXES for n in ("max", "fro")}
    np.testing.assert_allclose(out["align_max"][0], 1.0)
    np.testing.assert_allclose(out["margin_max"], [1 / 0.5, 2 / 1.0])  # scale-free
    # run 0 at its own solution: ratio 1; run 1 (2 W*_0) against W2's max norm 3
    np.testing.assert_allclose(out["margin_ratio_max"], [1.0, 2.0 * 3.0])
    np.testing.assert_allclose(out["align_fro"][1], measures.alignment(W_star[None], W2[None])[0])


def test_zero_matrix_measures_zero():
    """A run from W0 = 0 logs 0 at t = 0, not NaN (the backends refuse non-finite metrics)."""
    measure = measures.extra_metrics([DATA], [{"fro": W2}], ["fro"])
    out = measure(np.zeros((1, 2, 2)), np.zeros((1, 2)))
    of_w = [k for k in out if not k.startswith(("face_cos", "centroid"))]
    assert of_w and all(np.all(out[k] == 0) for k in of_w)
    assert np.isnan(out["face_cos_fro"]).all()  # no probe given: not known


def test_centroid_measures_by_hand():
    """Two orthogonal unit solutions: their centroid C = W_a + W_b has cosine 1/sqrt(2)
    with each (no norm ahead), and C's margin ratio in N is its margin over W*_N's; the
    values are the SVMs', whatever W the run is at."""
    W_a, W_b = np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [0.0, 1.0]])
    measure = measures.extra_metrics([DATA], [{"fro": W_a, "max": W_b}], ["fro", "max"])
    out = measure(W2[None], np.zeros((1, 2)))
    np.testing.assert_allclose(out["centroid_align_fro"], [1 / math.sqrt(2)], rtol=1e-12)
    np.testing.assert_allclose(out["centroid_align_max"], [1 / math.sqrt(2)], rtol=1e-12)
    # C = I: both constraints (W00 - W10, W01 + W11) are 1, so C's margin is 1 / ||I||_N:
    # 1 / sqrt(2) in fro, 1 in max, times the optima ||W_a||_fro = ||W_b||_max = 1
    np.testing.assert_allclose(out["centroid_margin_ratio_fro"], [1 / math.sqrt(2)], rtol=1e-12)
    np.testing.assert_allclose(out["centroid_margin_ratio_max"], [1.0], rtol=1e-12)
    again = measure(np.zeros((1, 2, 2)), np.zeros((1, 2)))
    assert all(again[k] == out[k] for k in out if k.startswith("centroid"))


def test_face_cosines_are_logged_and_new_sets_probed_in_the_probe_norms():
    measure = measures.extra_metrics(
        [DATA_Y], [{"max": W2, "fro": W2, "spectral": W2}], ["max", "fro", "spectral"],
        train_u=True, faces=[{"max": 0.5, "fro": 1.0, "spectral": 0.7}], probe=("max",),
    )  # fmt: skip
    kept = measure(W2[None], U_KEPT[None])
    assert kept["face_cos_max"][0] == 0.5 and kept["face_cos_fro"][0] == 1.0
    moved = measure(W2[None], U_MOVED[None])  # a new token set: solved, max probed
    W_new = solve_w_svm_norm(DATA_Y["X"], np.array([0, 0]), "max").solution
    assert moved["face_cos_max"][0] == pytest.approx(
        uniqueness.face_cosine(DATA_Y["X"], np.array([0, 0]), "max", W_new), abs=1e-6
    )
    assert moved["face_cos_fro"][0] == 1.0  # strictly convex: unique, nothing solved
    assert np.isnan(moved["face_cos_spectral"][0])  # not in the probe norms: not known


# a decoder trained away from the data's optimal tokens: sample 1's token 0 now scores best
DATA_Y = dict(DATA, y=np.array([1.0, 1.0]))
U_MOVED = np.array([1.0, -2.0])  # scores (1, -2) and (-2, -3): token 0 best in both
U_KEPT = np.array([1.0, 0.5])  # scores (1, 0.5) and (0.5, 2): the data's tokens (0, 1)


def test_optimal_tokens_follow_the_decoder_and_keep_the_data_s_where_tied():
    np.testing.assert_array_equal(measures.optimal_tokens(DATA_Y, U_MOVED), [0, 0])
    np.testing.assert_array_equal(measures.optimal_tokens(DATA_Y, U_KEPT), [0, 1])
    # u = 0: every score ties, no token is optimal yet: the data's
    np.testing.assert_array_equal(measures.optimal_tokens(DATA_Y, np.zeros(2)), [0, 1])


def test_a_trained_decoder_is_measured_against_the_svm_of_its_own_optimal_tokens():
    """Where u moved sample 1's optimal token to 0, the margins are those of the
    constraints of tokens (0, 0), and W* is that set's SVM (solved then, once)."""
    stored = {"fro": W2}
    measure = measures.extra_metrics([DATA_Y], [stored], ["fro"], train_u=True)
    moved = measure(W2[None], U_MOVED[None])
    assert moved[geometry_names.OPT_MOVED][0] == 1.0
    assert moved[geometry_names.OPT_MOVED_SAMPLES][0] == 2.0  # sample 1: 2^1
    # the constraints of opt (0, 0): sample 1's a = x_0 - x_1 = (-1, -1), b = (0, 1)
    smallest = min(W2[0, 0] - W2[1, 0], -(W2[0, 1] + W2[1, 1]))
    np.testing.assert_allclose(moved["margin_fro"], [smallest / np.linalg.norm(W2)])
    W_new = solve_w_svm_norm(DATA_Y["X"], np.array([0, 0]), "fro").solution
    np.testing.assert_allclose(moved["align_fro"], measures.alignment(W2[None], W_new[None]))
    # back to the data's tokens: the stored solution again, nothing moved
    kept = measure(W2[None], U_KEPT[None])
    assert kept[geometry_names.OPT_MOVED][0] == 0.0
    np.testing.assert_allclose(kept["align_fro"], measures.alignment(W2[None], W2[None]))


# ------------------------------------------------ cross-attention: the queries Z (model.queries)


def test_the_margins_read_the_queries_of_a_cross_attention_dataset():
    """smallest_constraint is min (x_opt - x_t)^T W z_i, written out here; at each norm's
    SVM solution of the cross-attention data (solved with Z) the measures give
    margin_ratio 1 and align 1, where the same W read as self-attention does not (the
    control: the measures read Z)."""
    data = cross_instance(0, dict(n=4, T=3, d=6))
    W = np.random.default_rng(3).standard_normal((6, 6))
    scores = np.einsum("ntd,de,ne->nt", data["X"], W, data["Z"])
    keep = np.arange(3)[None, :] != data["opt"][:, None]
    by_hand = (scores[np.arange(4), data["opt"]][:, None] - scores)[keep].min()
    got = measures.smallest_constraint(W, data["X"], data["opt"], data["Z"])
    assert got == pytest.approx(by_hand, rel=1e-13)
    norms = ["fro", "l3"]
    stars = {n: solve_w_svm_norm(data["X"], data["opt"], n, queries=data["Z"]) for n in norms}
    hook = measures.extra_metrics([data], [{n: s.solution for n, s in stars.items()}], norms)
    for norm, star in stars.items():
        out = hook(star.solution[None], np.zeros((1, 6)))
        assert out[f"margin_ratio_{norm}"][0] == pytest.approx(1.0, abs=1e-6)
        assert out[f"align_{norm}"][0] == pytest.approx(1.0, abs=1e-12)
        plain = measures.normalized_margins(star.solution[None], [without_queries(data)], norm)
        assert abs(plain[0] * star.value - 1.0) > 1e-3


def test_a_new_token_set_is_solved_once_for_every_job_that_meets_it(tmp_path, monkeypatch):
    """Two optimizers' jobs (two measures, two caches on one folder) meet the same new
    token set: the second solves nothing and logs the same numbers, bit for bit."""
    from attnbias.svm import token_set_cache
    from attnbias.svm.token_set_cache import TokenSetCache

    solved = []
    solve_w = token_set_cache.solve_w
    monkeypatch.setattr(token_set_cache, "solve_w", lambda *a: solved.append(a[1]) or solve_w(*a))
    jobs = []
    for probe in ("max", "spectral"):  # e.g. sign descent's and Muon's expected norms
        cache = TokenSetCache(tmp_path)
        measure = measures.extra_metrics(
            [DATA_Y], [{"max": W2, "fro": W2, "spectral": W2}], ["max", "fro", "spectral"],
            train_u=True, probe=(probe,), cache=cache,
        )  # fmt: skip
        jobs.append((measure(W2[None], U_MOVED[None]), cache.counts))
    (first, first_counts), (second, second_counts) = jobs
    assert sorted(solved) == ["fro", "max", "spectral"]  # the first job's, once each
    assert first_counts["solved"] == 4 and second_counts["reused"] == 3  # 3 W* + a probe
    assert second_counts["solved"] == 1  # its own probe: spectral's face
    for key in first:
        same = key.startswith("face_cos_max") or key.startswith("face_cos_spectral")
        if not same:
            assert first[key].tobytes() == second[key].tobytes(), key
    # each job reports the probe of its own norm only, as without the cache
    assert np.isnan(first["face_cos_spectral"][0]) and np.isnan(second["face_cos_max"][0])


# ------------------------------- tokens: selected (each run's attention's tokens, a fixed v)


def test_selected_tokens_follow_the_attention_and_keep_the_data_s_where_tied():
    data = cross_instance(0)
    W = np.random.default_rng(5).standard_normal((10, 10))
    scores = np.einsum("ntd,de,ne->nt", data["X"], W, data["Z"])
    np.testing.assert_array_equal(measures.selected_tokens(data, W), scores.argmax(axis=1))
    # W = 0: every score ties, no token is selected yet: the data's
    np.testing.assert_array_equal(measures.selected_tokens(data, np.zeros((10, 10))), data["opt"])


def test_a_run_is_measured_against_the_svms_of_the_tokens_its_attention_selects():
    """At the Frobenius SVM of the worst-scoring tokens (not the data's), the attention selects
    those tokens: `selected` measures against their SVM (align and margin ratio 1), counts the
    sequences whose token is not globally optimal, and says the set fails the local check, as
    neighbours.local_tokens.check says solving on its own; the control: the same W measured
    against the data's optimal tokens (the default) is not aligned with their SVM."""
    from attnbias.neighbours import local_tokens

    data = cross_instance(0)
    gamma = data["y"][:, None] * (data["X"] @ data["u"])
    worst = gamma.argmin(axis=1)
    assert np.any(worst != data["opt"])
    norms = ["fro", "max"]
    stored = {n: solve_w_svm_norm(data["X"], data["opt"], n, queries=data["Z"]).solution
              for n in norms}  # fmt: skip
    W = solve_w_svm_norm(data["X"], worst, "fro", queries=data["Z"]).solution
    np.testing.assert_array_equal(measures.selected_tokens(data, W), worst)
    out = measures.extra_metrics([data], [stored], norms, tokens="selected")(
        W[None], data["u"][None]
    )
    assert out["align_fro"][0] == pytest.approx(1.0, abs=1e-9)
    assert out["margin_ratio_fro"][0] == pytest.approx(1.0, abs=1e-6)
    assert out[geometry_names.OPT_MOVED][0] == np.sum(worst != data["opt"])
    independent = local_tokens.check(data, worst)
    assert not independent.locally_optimal  # the worst tokens: a support token outscores
    assert out[geometry_names.TOKENS_LOCAL][0] == 0.0
    # the data's own (globally optimal) tokens pass the check
    at_opt = measures.extra_metrics([data], [stored], norms, tokens="selected")(
        stored["fro"][None], data["u"][None]
    )
    assert at_opt[geometry_names.TOKENS_LOCAL][0] == 1.0
    assert at_opt[geometry_names.OPT_MOVED][0] == 0.0
    assert at_opt["align_fro"][0] == pytest.approx(1.0, abs=1e-12)
    # control: the default measures the same W against the data's tokens' SVM
    default = measures.extra_metrics([data], [stored], norms)(W[None], data["u"][None])
    assert default["align_fro"][0] < 0.99
    assert geometry_names.TOKENS_LOCAL not in default


def test_selected_tokens_with_a_trained_decoder_are_refused():
    data = cross_instance(0)
    with pytest.raises(ValueError, match="u must not train"):
        measures.extra_metrics([data], [{}], ["fro"], train_u=True, tokens="selected")
    with pytest.raises(ValueError, match="'optimal' or 'selected'"):
        measures.extra_metrics([data], [{}], ["fro"], tokens="local")


def test_a_selected_token_set_is_checked_on_the_support_of_the_runs_own_norm():
    # tests/neighbours/test_local_tokens.py's case: TF-as-SVM's data of seed 2 and the tokens
    # its K, Q run ends on, locally optimal on the nuclear SVM's support, not on the
    # Frobenius one's (sample 5's token 1 outscores the selected one there)
    from attnbias.data import models

    data = models.generate("cross_gaussian", 2, {"init": "zero", "n": 6, "T": 8, "d": 10})
    tokens = np.array([7, 6, 3, 3, 5, 5]) - 1
    norms = ["fro", "nuclear"]
    stored = {n: solve_w_svm_norm(data["X"], data["opt"], n, queries=data["Z"]).solution
              for n in norms}  # fmt: skip
    W = solve_w_svm_norm(data["X"], tokens, "nuclear", queries=data["Z"]).solution
    np.testing.assert_array_equal(measures.selected_tokens(data, 5.0 * W), tokens)

    def local(own):
        measure = measures.extra_metrics([data], [stored], norms, tokens="selected", own=own)
        return measure(5.0 * W[None], data["u"][None])[geometry_names.TOKENS_LOCAL][0]

    assert local("nuclear") == 1.0
    assert local(None) == 0.0  # control: the Frobenius support (the default) fails it
