"""Synthetic datasets: the file contract, Example 1's assumptions, determinism, the bad
initial direction and errors."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.data import hypotheses, models
from attnbias.svm import max_margin

CASES = {
    "example1": dict(n=7, T=5, d=16),
    "dm": dict(n=7, T=5, d=16),
    "bad_direction": dict(n=7, T=5, d=16, init_norm=2.0),
    "two_token": {},
}


def _scores(ds):
    return ds["y"][:, None] * (ds["X"] @ ds["u"])


@pytest.mark.parametrize("model", sorted(CASES))
def test_contract_keys_shapes_and_types(model):
    ds = models.generate(model, 0, CASES[model])
    params = CASES[model]
    n, T, d = (1, 2, 2) if model == "two_token" else (params["n"], params["T"], params["d"])
    assert ds["X"].shape == (n, T, d)
    assert ds["y"].shape == (n,)
    assert ds["opt"].shape == (n,)
    assert ds["W0"].shape == (d, d)
    assert set(np.unique(ds["y"])) <= {-1.0, 1.0}
    assert np.issubdtype(ds["opt"].dtype, np.integer)
    assert np.all((ds["opt"] >= 0) & (ds["opt"] < T))
    for key in ("X", "y", "W0"):
        assert ds[key].dtype == np.float64
        assert np.all(np.isfinite(ds[key]))
    expected_keys = {"X", "y", "opt", "W0"}
    if model != "dm":  # a fixed decoder; DM trains u from 0
        expected_keys.add("u")
        assert ds["u"].shape == (d,)
    if model == "bad_direction":
        expected_keys.add("bad")
    assert set(ds) == expected_keys


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("T", [2, 3, 6])
def test_example1_assumption_2(seed, T):
    ds = models.generate("example1", seed, dict(n=12, T=T, d=30))
    n = 12
    np.testing.assert_array_equal(ds["u"], np.eye(30)[0])
    np.testing.assert_array_equal(ds["W0"], 0.0)
    gamma = _scores(ds)
    rows = np.arange(n)
    assert np.all(ds["opt"] >= 1)  # the optimal token is never the query
    np.testing.assert_array_equal(gamma[rows, ds["opt"]], 1.0)  # opt score = opt_signal
    others = np.arange(T)[None, :] != ds["opt"][:, None]
    np.testing.assert_array_equal(gamma[others], 0.0)  # every non-opt token scores 0 (Ass. 2)
    assert hypotheses.report(ds)["ass2_holds"]
    with_query = models.generate("example1", seed, dict(n=12, T=T, d=30, query_signal=0.5))
    np.testing.assert_array_equal(_scores(with_query)[:, 0], 0.5)  # query score = query_signal
    # with one non-opt token (T = 2) its scores cannot differ: Ass. 2 still holds
    assert hypotheses.report(with_query)["ass2_holds"] == (T == 2)
    # the optimal token is the unique best one of every sequence
    assert np.all(np.argmax(gamma, axis=1) == ds["opt"])
    # tokens are N(0, I/d) plus signal: squared norms near 1 (d = 30: loose band)
    noise_sq = np.sum(ds["X"][..., 1:] ** 2, axis=-1)
    assert 0.3 < noise_sq.mean() < 1.5


def test_example1_signal_parameters_and_labels():
    ds = models.generate("example1", 3, dict(n=200, T=4, d=10, opt_signal=2.0, query_signal=-0.5))
    gamma = _scores(ds)
    np.testing.assert_allclose(gamma[np.arange(200), ds["opt"]], 2.0, rtol=0, atol=0)
    np.testing.assert_allclose(gamma[:, 0], -0.5, rtol=0, atol=0)
    # both labels appear and every optimal position >= 1 is used
    assert set(ds["y"]) == {-1.0, 1.0}
    assert set(ds["opt"]) == {1, 2, 3}


def test_example1_without_orthogonal_noise():
    ds = models.generate("example1", 0, dict(n=12, T=4, d=30, noise_orthogonal_to_u=False))
    gamma = _scores(ds)
    others = (np.arange(4)[None, :] != ds["opt"][:, None]) & (np.arange(4)[None, :] != 0)
    assert np.ptp(gamma[others]) > 0  # scores now differ ...
    np.testing.assert_allclose(gamma[others], 0.0, atol=1.5)  # ... by N(0, 1/d) noise


def test_assumption_report_on_example1():
    ds = models.generate("example1", 0, dict(n=10, T=4, d=50, query_signal=0.5))
    report = models.assumption_report(ds)
    tokens = ds["X"].reshape(-1, 50)
    gram = tokens @ tokens.T
    off = np.abs(gram - np.diag(np.diag(gram)))
    assert report["max_offdiag_inner"] == pytest.approx(off.max(), rel=1e-12)
    assert report["min_sq_norm"] == pytest.approx(np.diag(gram).min(), rel=1e-12)
    # non-optimal tokens: the query (0.5) and the rest (0): spread 0.5, opt gap 0.5
    assert report["max_nonopt_score_spread"] == pytest.approx(0.5, abs=1e-15)
    assert report["min_opt_score_gap"] == pytest.approx(0.5, abs=1e-15)
    assert "min_opt_score_gap" not in models.assumption_report(
        models.generate("dm", 0, dict(n=4, T=3, d=10))
    )


def test_dm_structure():
    n, T, d = 400, 4, 50
    ds = models.generate("dm", 1, dict(n=n, T=T, d=d, mu_norm=1.0, noise_scale=0.5))
    np.testing.assert_array_equal(ds["opt"], 0)
    np.testing.assert_array_equal(ds["W0"], 0.0)
    # x_1 = y mu + N(0, I/d): its projection on e_1 has mean y
    proj = ds["y"] * ds["X"][:, 0, 0]
    assert abs(proj.mean() - 1.0) < 4 / np.sqrt(n * d)
    # the other tokens have the smaller norm (noise_scale^2 vs 1 in expectation)
    sq_opt = np.sum(ds["X"][:, 0] ** 2, axis=-1).mean()
    sq_other = np.sum(ds["X"][:, 1:] ** 2, axis=-1).mean()
    assert sq_opt == pytest.approx(2.0, rel=0.05)  # ||mu||^2 + 1
    assert sq_other == pytest.approx(0.25, rel=0.05)


@pytest.mark.parametrize("model", sorted(CASES))
def test_determinism(model):
    a = models.generate(model, 5, CASES[model])
    b = models.generate(model, 5, CASES[model])
    assert set(a) == set(b)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    if model != "two_token":  # deterministic by design
        c = models.generate(model, 6, CASES[model])
        assert not np.array_equal(a["X"], c["X"])


def test_two_token_example():
    ds = models.generate("two_token", 123, {"d": 4})
    np.testing.assert_array_equal(ds["X"][0], np.eye(4)[:2])
    np.testing.assert_array_equal(ds["u"], np.eye(4)[0])
    np.testing.assert_array_equal(ds["y"], [1.0])
    np.testing.assert_array_equal(ds["opt"], [0])
    W0 = ds["W0"]
    assert np.linalg.norm(W0) == pytest.approx(1.0, abs=1e-15)
    # orthogonal to W_mm ~ (e1 - e2) e1^T
    W_dir = np.outer(np.eye(4)[0] - np.eye(4)[1], np.eye(4)[0])
    assert np.sum(W0 * W_dir) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("init_norm", [0.5, 5.0])
def test_bad_direction(seed, init_norm):
    params = dict(n=8, T=4, d=24, init_norm=init_norm)
    ds = models.generate("bad_direction", seed, params)
    W0 = ds["W0"]
    assert np.linalg.norm(W0) == pytest.approx(init_norm, rel=1e-12)
    n = 8
    rows = np.arange(n)
    assert np.all(ds["bad"] != ds["opt"])
    # the bad token has the lowest score among the non-optimal ones
    gamma = _scores(ds)
    masked = np.where(np.arange(4) == ds["opt"][:, None], np.inf, gamma)
    np.testing.assert_array_equal(gamma[rows, ds["bad"]], masked.min(axis=1))
    # softmax(X W0 x_1) favours the bad token over the optimal one in every sequence
    logits = np.einsum("ntd,de,ne->nt", ds["X"], W0, ds["X"][:, 0])
    attn = np.exp(logits - logits.max(axis=1, keepdims=True))
    attn /= attn.sum(axis=1, keepdims=True)
    assert np.all(attn[rows, ds["opt"]] < attn[rows, ds["bad"]])
    # and the bad token is the argmax of the attention (W0 is a max-margin direction for it)
    assert np.all(np.argmax(logits, axis=1) == ds["bad"])
    # the same data as example1 with that seed
    plain = models.generate("example1", seed, dict(n=8, T=4, d=24))
    np.testing.assert_array_equal(ds["X"], plain["X"])


def test_unknown_model_raises():
    with pytest.raises(models.DataError, match="no_such_model"):
        models.generate("no_such_model", 0, {})
    assert issubclass(models.DataError, ValueError)


def test_a_data_model_is_registered_with_its_description():
    """The description opens its figures' captions: an entry without one is refused."""
    with pytest.raises(TypeError, match="description"):
        models.DataModel(models.example1)
    with pytest.raises(models.DataError, match="'example1': give it a description"):
        models.DataModel(models.example1, "  ")
    # a generator in a module of its own is found by the model's name, when asked
    assert models.generator("bad_direction").__module__ == "attnbias.data.bad_direction"


@pytest.mark.parametrize(
    ("model", "params", "match"),
    [
        ("example1", dict(n=4, T=1, d=5), "T=1"),
        ("example1", dict(n=0, T=3, d=5), "n=0"),
        ("dm", dict(n=4, T=3, d=0), "d=0"),
        ("example1", dict(n=4, T=3, d=5, query_signal=1.0), "query_signal"),
        ("two_token", {"d": 1}, "d=1"),
    ],
)
def test_bad_parameters_raise(model, params, match):
    with pytest.raises(models.DataError, match=match):
        models.generate(model, 0, params)


def test_token_scores():
    ds = models.generate("example1", 0, dict(n=3, T=3, d=6, noise_orthogonal_to_u=False))
    expected = np.array(
        [[ds["y"][i] * ds["u"] @ ds["X"][i, t] for t in range(3)] for i in range(3)]
    )
    np.testing.assert_allclose(
        models.token_scores(ds["X"], ds["y"], ds["u"]), expected, rtol=1e-15, atol=1e-15
    )


def test_example1_opt_is_the_best_token_with_noise_along_u():
    ds = models.generate("example1", 1, dict(n=6, T=4, d=10, noise_orthogonal_to_u=False))
    assert np.all(np.argmax(_scores(ds), axis=1) == ds["opt"])


def test_binary_digits_patches_and_classifier():
    from sklearn.datasets import load_digits

    d = models.generate("binary_digits", 0, {"n": 30, "T": 4, "noise": 0.1})
    n, T, dim = d["X"].shape
    assert (n, T, dim) == (30, 4, 64)
    signal = d["X"][np.arange(n), d["signal"]]
    # the signal patch is a real 0/1 image of scikit-learn's digits, with its label
    bunch = load_digits()
    images, targets = bunch.data / 16.0, bunch.target
    for patch, label in zip(signal, d["y"], strict=True):
        match = np.flatnonzero(np.all(np.isclose(images, patch), axis=1))
        assert len(match) >= 1 and targets[match[0]] == (1 if label > 0 else 0)
    # at this noise the signal patch is the optimal token, and the classifier gets it right
    assert np.array_equal(d["opt"], d["signal"])
    gamma = models.token_scores(d["X"], d["y"], d["u"])
    assert np.all(gamma[np.arange(n), d["opt"]] > 0)
    assert d["W0"].shape == (64, 64) and not d["W0"].any()


def test_binary_digits_errors_name_the_problem():
    with pytest.raises(models.DataError, match="n=1000 sequences"):
        models.generate("binary_digits", 0, {"n": 1000, "T": 3, "noise": 0.1})
    with pytest.raises(models.DataError, match="digits source"):
        models.generate("binary_digits", 0, {"n": 5, "T": 3, "noise": 0.1, "source": "usps"})


def test_binary_digits_from_mnist_files(tmp_path):
    from fixtures_vision import write_mnist

    written = write_mnist(tmp_path, n_train=200, n_test=10, seed=0)
    params = {"n": 6, "T": 3, "noise": 0.1, "source": "mnist", "root": str(tmp_path)}
    d = models.generate("binary_digits", 1, params)
    assert d["X"].shape == (6, 3, 784)
    images, labels = written["train"]
    pool = images[np.isin(labels, (0, 1))].reshape(-1, 784) / 255.0
    for patch in d["X"][np.arange(6), d["signal"]]:
        assert np.any(np.all(np.isclose(pool, patch), axis=1))
    note = models.source_note("binary_digits", params)
    assert note.startswith("digits 0 vs 1 from MNIST (28x28),")


def test_a_data_models_source_note_is_its_registry_entrys():
    """The figure title's note of real images comes from the model's entry (`source`), with
    the generator's defaults; synthetic models have none."""
    assert models.source_note("binary_digits", {}) == (
        "digits 0 vs 1 from scikit-learn's handwritten digits (8x8)"
    )
    # the noise decides Ass. 2 (equal non-optimal scores at noise 0 only): named wherever
    # the data are
    assert models.source_note("binary_digits", {"noise": 0.3}).endswith("noise patches of std 0.3")
    assert models.source_note("binary_digits", {"digits": [3, 8]}).startswith("digits 3 vs 8")
    assert [name for name in models.MODELS if models.data_model(name).source] == ["binary_digits"]
    assert models.source_note("example1", {"n": 4}) is None


APP_C1 = dict(init_norm=0.5, direction=[[-1.0, -2.0], [3.0, 4.0]])  # config.yaml's fig8


def _logits(X, W):
    """x_{i,t}^T W x_{i,1}, shape (n, T)."""
    return np.einsum("ntd,de,ne->nt", X, W, X[:, 0])


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _gd(ds, iterations, lr=1.0):
    """Plain numpy GD on the exponential loss, (1/n) sum_i exp(-y_i u^T X_i^T softmax(X_i W x_i1)):
    the optimal token's softmax per sample at every step, and the last W."""
    X, y, u, W = ds["X"], ds["y"], ds["u"], ds["W0"].copy()
    gamma = models.token_scores(X, y, u)
    rows = np.arange(len(y))
    s_opt = []
    for _ in range(iterations + 1):
        attn = _softmax(_logits(X, W))
        s_opt.append(attn[rows, ds["opt"]])
        margin = (attn * gamma).sum(axis=1)
        # d loss / d logit_{i,t} = -exp(-margin_i) a_t (gamma_t - margin_i) / n
        dlogit = -np.exp(-margin)[:, None] * attn * (gamma - margin[:, None]) / len(y)
        W -= lr * np.einsum("nt,ntd,ne->de", dlogit, X, X[:, 0])
    return np.array(s_opt), W


def test_app_c1_contract_and_token_optimality():
    ds = models.generate("app_c1", 0, APP_C1)
    assert set(ds) == {"X", "y", "opt", "W0", "u", "bad"}
    assert ds["X"].shape == (2, 2, 2) and ds["W0"].shape == (2, 2) and ds["u"].shape == (2,)
    for key in ("X", "y", "W0", "u"):
        assert ds[key].dtype == np.float64
    np.testing.assert_array_equal(ds["y"], [1.0, -1.0])
    # opt = argmax_t y u^T x_t (Definition 1), unique: the second token, then the query
    gamma = _scores(ds)
    np.testing.assert_array_equal(ds["opt"], np.argmax(gamma, axis=1))
    np.testing.assert_array_equal(ds["opt"], [1, 0])
    assert np.all(np.abs(gamma[:, 0] - gamma[:, 1]) > 0)
    # deterministic: the seed does not matter
    other = models.generate("app_c1", 7, APP_C1)
    for key in ds:
        np.testing.assert_array_equal(ds[key], other[key])


def test_app_c1_starts_in_a_bad_direction_that_violates_w_svm():
    ds = models.generate("app_c1", 0, APP_C1)
    X, opt, W0 = ds["X"], ds["opt"], ds["W0"]
    assert np.linalg.norm(W0) == pytest.approx(0.5, rel=1e-12)
    rows = np.arange(2)
    a = X[rows, opt] - X[rows, 1 - opt]  # x_opt - x_other
    margins = np.einsum("nd,de,ne->n", a, W0, X[:, 0])
    # sample 1 (index 0): W-SVM constraint violated, even with the wrong sign; sample 2 favoured
    assert margins[0] < 0 and margins[1] > 0
    attn = _softmax(_logits(X, W0))
    assert attn[0, opt[0]] < 0.5 < attn[1, opt[1]]
    np.testing.assert_array_equal(ds["bad"], np.argmax(_logits(X, W0), axis=1))
    assert ds["bad"][0] != opt[0] and ds["bad"][1] == opt[1]
    # a small start (Lemma 2): no initial logit reaches 0.5 in magnitude
    assert np.abs(_logits(X, W0)).max() < 0.5
    # the W-SVM is feasible; both constraints are active at W_mm = [[2/3, -5/3], [-2, 1/3]]
    solution = max_margin.solve_w_svm(X, opt)
    np.testing.assert_allclose(solution.W, [[2 / 3, -5 / 3], [-2, 1 / 3]], atol=1e-10)
    np.testing.assert_allclose(solution.margins, 1.0, atol=1e-10)
    # and W0 points away from it
    assert np.sum(W0 * solution.W) < 0


def test_app_c1_assumption_report():
    report = models.assumption_report(models.generate("app_c1", 0, APP_C1))
    assert report["max_nonopt_score_spread"] == 0.0  # one non-optimal token per sample
    assert report["min_opt_score_gap"] == pytest.approx(0.5)
    assert report["min_sq_norm"] == pytest.approx(0.25)
    assert report["max_offdiag_inner"] == pytest.approx(1.5)


def test_app_c1_gd_dips_then_converges_to_w_mm():
    ds = models.generate("app_c1", 0, APP_C1)
    s_opt, W = _gd(ds, 10_000)
    bad = s_opt[:, 0]  # sample 1, whose optimal token W0 disfavours
    assert bad[1] < bad[0] and s_opt[1, 1] > s_opt[0, 1]  # falls at first; sample 2's rises
    low = int(np.argmin(bad))
    assert 10 < low < 200 and bad[low] < bad[0] - 0.1  # a clear dip ...
    assert np.all(np.diff(bad[low:]) > 0) and bad[-1] > 0.99  # ... then up towards 1
    assert np.all(np.diff(s_opt[:, 1]) > 0) and s_opt[-1, 1] > 0.99
    W_mm = max_margin.solve_w_svm(ds["X"], ds["opt"]).W
    cos = np.sum(W * W_mm) / (np.linalg.norm(W) * np.linalg.norm(W_mm))
    assert 1 - cos < 2e-3


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (dict(init_norm=0.5, direction=[[0.0, 0.0], [0.0, 0.0]]), "non-zero 2x2"),
        (dict(init_norm=0.5, direction=[[1.0, 2.0, 3.0]]), "non-zero 2x2"),
        (dict(init_norm=0.0, direction=[[1.0, 0.0], [0.0, 1.0]]), "init_norm"),
    ],
)
def test_app_c1_bad_parameters_raise(params, match):
    with pytest.raises(models.DataError, match=match):
        models.generate("app_c1", 0, params)


def test_each_model_declares_whether_its_data_hold_a_decoder():
    """DataModel.fixed_decoder, which the config checks read (figures.config_check), is
    what each generator does: u in the data, or none (the decoder trains)."""
    cases = {
        **CASES,
        "app_c1": dict(init_norm=0.5, direction=[[-1, -2], [3, 4]]),
        "binary_digits": dict(n=4, T=3, noise=0.1),
        "cross_gaussian": {},
        "attentionmd_joint": {},
    }
    assert set(cases) == set(models.DATA_MODELS)
    for name, entry in models.DATA_MODELS.items():
        assert ("u" in models.generate(name, 0, cases[name])) == entry.fixed_decoder, name
    assert not models.data_model("dm").fixed_decoder
    assert not models.data_model("attentionmd_joint").fixed_decoder
