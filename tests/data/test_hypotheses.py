"""The hypotheses measured on data (attnbias.data.hypotheses), on hand-made datasets."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.data import hypotheses, models
from attnbias.svm import max_margin
from attnbias.workflow import npz, store


def _two_samples(non_opt_scores=(0.0, 0.0), shared=0.0):
    """Two samples, T = 3, d = 6: opt token 1 carries y u; tokens orthogonal but `shared`."""
    X = np.zeros((2, 3, 6))
    X[0, :, 1:4] = np.eye(3)
    X[1, :, 3:6] = np.eye(3)  # overlaps sample 0's last token at coordinate 3
    y = np.array([1.0, -1.0])
    u = np.eye(6)[0]
    X[:, 1, 0] = y  # opt tokens score 1
    X[:, 2, 0] = y * np.array(non_opt_scores)
    X[:, :, 5] += shared
    return {"X": X, "y": y, "opt": np.array([1, 1]), "u": u, "W0": np.zeros((6, 6))}


def test_assumption1_rho_by_hand():
    ds = _two_samples()
    # sample 0's token 2 is e_3, sample 1's token 0 is e_3: |<x, x'>| = 1, opt norms^2 = 2
    assert hypotheses.assumption1(ds["X"], ds["opt"])["ass1_rho"] == pytest.approx(0.5)
    assert hypotheses.assumption1(ds["X"], ds["opt"])["ass1_holds"]
    correlated = _two_samples(shared=1.0)
    assert not hypotheses.assumption1(correlated["X"], correlated["opt"])["ass1_holds"]


def test_assumption2_equal_and_unequal_scores():
    equal = hypotheses.report(_two_samples())
    assert equal["ass2_holds"] and equal["ass2_spread"] == 0 and equal["ass2_opt_gap"] == 1
    unequal = hypotheses.report(_two_samples(non_opt_scores=(0.3, 0.0)))
    assert not unequal["ass2_holds"] and unequal["ass2_spread"] == pytest.approx(0.3)
    above = hypotheses.report(_two_samples(non_opt_scores=(1.5, 1.5)))  # spread 0, not below
    assert not above["ass2_holds"] and above["ass2_opt_gap"] == pytest.approx(-0.5)


def test_condition1_on_dm_and_its_violations():
    ds = models.generate("dm", 0, dict(n=4, T=3, d=60, mu_norm=1.0, noise_scale=0.5))
    report = hypotheses.report(ds)
    assert report["cond1_holds"] and "ass2_holds" not in report
    assert report["cond1_d_over_nT"] == 5.0
    small_d = hypotheses.report(models.generate("dm", 0, dict(n=4, T=3, d=10)))
    assert not small_d["cond1_holds"]  # d < nT: not overparameterised
    loud_noise = hypotheses.report(models.generate("dm", 0, dict(n=4, T=3, d=60, noise_scale=3.0)))
    assert not loud_noise["cond1_holds"] and loud_noise["cond1_opt_norm_ratio"] < 1
    started = dict(ds, W0=np.eye(60))
    assert not hypotheses.report(started)["cond1_zero_init"]


def test_summary_takes_the_worst_seed_and_describe_names_each_hypothesis():
    good, bad = hypotheses.report(_two_samples()), hypotheses.report(_two_samples((0.3, 0)))
    summary = hypotheses.summarize([good, bad])
    assert not summary["ass2_holds"] and summary["ass2_spread"] == pytest.approx(0.3)
    text = hypotheses.describe(summary)
    assert "Ass. 1 holds" in text and "Ass. 2 BROKEN" in text


def test_u_svm_support_by_hand_and_its_control():
    """Optimal tokens y_i x_opt,i = e_1 and 3 e_1: u_mm = e_1 (our solver's), margins 1 and
    3, so only the first sample is a support vector; with both at e_1 + e_i (orthogonal
    parts of equal length) both are."""
    X = np.zeros((2, 2, 4))
    X[0, 0, 0], X[1, 0, 0] = 1.0, -3.0
    y, opt = np.array([1.0, -1.0]), np.array([0, 0])
    u_mm = max_margin.solve_u_svm(X, y, opt).solution
    np.testing.assert_allclose(u_mm, [1, 0, 0, 0], atol=1e-9)
    out = hypotheses.u_svm_support(X, y, opt, u_mm)
    assert out["cond1_sv_fraction"] == 0.5 and not out["cond1_sv_holds"]
    assert out["cond1_u_margin_max"] == pytest.approx(3.0)
    X[1, 0, 0], X[0, 0, 2], X[1, 0, 3] = -1.0, 1.0, -1.0
    out = hypotheses.u_svm_support(X, y, opt, max_margin.solve_u_svm(X, y, opt).solution)
    assert out["cond1_sv_fraction"] == 1.0 and out["cond1_sv_holds"]


def _report_with_svm(dataset: dict) -> dict:
    solutions = max_margin.solve_for_dataset(dataset, train_u=True, name="dm")
    return hypotheses.report(dataset, max_margin.to_arrays(solutions))


def test_every_sample_is_a_support_vector_only_with_d_large_next_to_n():
    """DM at fig3's n = 20, d = nT: some samples off the support; n = 5: all on it."""
    fig3 = _report_with_svm(models.generate("dm", 0, dict(n=20, T=5, d=100)))
    assert fig3["cond1_holds"] and not fig3["cond1_sv_holds"]
    assert 0 < fig3["cond1_sv_fraction"] < 1 and fig3["cond1_u_margin_max"] > 1.01
    small_n = _report_with_svm(models.generate("dm", 0, dict(n=5, T=5, d=100)))
    assert small_n["cond1_sv_holds"] and small_n["cond1_sv_fraction"] == 1.0


def test_the_data_job_measures_no_svm():
    report = hypotheses.report(models.generate("dm", 0, dict(n=5, T=5, d=100)))
    assert "cond1_holds" in report and "cond1_sv_fraction" not in report


# ---------------------------------------------------------------- stored by the jobs


def _job_files(tmp_path, model: str, params: dict, train_u: bool):
    """A data file and an svm file as the data and svm jobs write them (one seed, seed 0),
    and what they hold."""
    dataset = models.generate(model, 0, params)
    arrays = max_margin.to_arrays(max_margin.solve_for_dataset(dataset, train_u, model))
    data_path, svm_path = tmp_path / f"{model}_data.npz", tmp_path / f"{model}_svm.npz"
    idents = {kind: {0: store.identity(kind, model, params, seed=0)} for kind in ("data", "svm")}
    npz.save_seeds(data_path, {0: dataset}, idents["data"], {0: hypotheses.report(dataset)})
    svm_report = {0: hypotheses.svm_report(dataset, arrays)}
    npz.save_seeds(svm_path, {0: arrays}, idents["svm"], svm_report)
    return data_path, svm_path, dataset, arrays


@pytest.mark.parametrize(
    "model, params, train_u",
    [("dm", dict(n=5, T=5, d=100), True), ("example1", dict(n=6, T=3, d=12), False)],
)
def test_the_stored_parts_join_into_the_report_measured_at_once(tmp_path, model, params, train_u):
    data_path, svm_path, dataset, arrays = _job_files(tmp_path, model, params, train_u)
    [stored] = npz.hypotheses_by_seed(data_path, svm_path)
    measured = hypotheses.report(dataset, arrays)
    assert list(stored.items()) == list(measured.items())  # names, order and values
    assert [type(v) for v in stored.values()] == [type(v) for v in measured.values()]
    assert ("cond1_sv_fraction" in stored) == train_u  # the svm job's part, where it has one
    # the report is no array: the readers of the arrays see what they saw before
    assert sorted(npz.load_data(data_path)[0]) == sorted(dataset)
    assert sorted(npz.load_seeds(svm_path)[0]) == sorted(arrays)
    # each file's identity checked where given (the claims job's `expect`: path -> identity)
    expect = {
        data_path: [store.identity("data", model, params, seed=0)],
        svm_path: [store.identity("svm", model, params, seed=0)],
    }
    assert npz.hypotheses_by_seed(data_path, svm_path, expect) == [stored]
    expect[svm_path] = [store.identity("svm", "other", params, seed=0)]
    with pytest.raises(store.FileContractError, match=r"_svm\.npz holds kind svm, experiment"):
        npz.hypotheses_by_seed(data_path, svm_path, expect)


def test_a_stored_report_keeps_every_value_exactly(tmp_path):
    report = {"a_rho": 0.1 + 0.2, "a_holds": True, "b_ratio": np.inf, "b_gap": np.nan}
    ident = {0: store.identity("data", "fig2", {}, seed=0)}
    npz.save_seeds(tmp_path / "r.npz", {0: {"X": np.zeros(2)}}, ident, {0: report})
    back = npz.load_hypotheses(tmp_path / "r.npz")[0]
    assert list(back) == list(report) and back["a_rho"] == 0.1 + 0.2 and back["a_holds"] is True
    assert back["b_ratio"] == np.inf and np.isnan(back["b_gap"])
    # a fixed decoder's svm: an empty report
    npz.save_seeds(tmp_path / "empty.npz", {0: {"X": np.zeros(2)}}, ident, {0: {}})
    assert npz.load_hypotheses(tmp_path / "empty.npz") == {0: {}}


def test_a_file_without_a_stored_report_is_refused_naming_it(tmp_path):
    dataset = models.generate("example1", 0, dict(n=6, T=3, d=12))
    ident = store.identity("data", "fig2", {"n": 6}, seed=0)
    npz.save_seeds(tmp_path / "old.npz", {0: dataset}, {0: ident})  # as attnbias wrote it before
    with pytest.raises(
        store.FileContractError, match=r"old\.npz: seed 0 holds no hypotheses report.*--forcerun"
    ):
        npz.load_hypotheses(tmp_path / "old.npz", [ident])
    report = hypotheses.report(dataset)
    npz.save_seeds(tmp_path / "new.npz", {0: dataset}, {0: ident}, {0: report})  # control
    assert npz.load_hypotheses(tmp_path / "new.npz", [ident]) == {0: report}
    with pytest.raises(store.FileContractError, match="from another config"):  # still checked
        other = store.identity("data", "fig2", {"n": 7}, seed=0)
        npz.load_hypotheses(tmp_path / "new.npz", [other])


def test_the_signal_patch_is_counted_where_it_is_not_the_top_scoring_token():
    """App. C.2's remark (the signal patch scores highest): the fraction of samples whose
    `signal` is opt; data without a signal patch report nothing of it."""
    ds = models.generate("binary_digits", 0, dict(n=8, T=3, noise=0.1))
    assert hypotheses.report(ds)["signal_opt_fraction"] == 1.0
    moved = dict(ds, signal=np.where(np.arange(8) < 2, (ds["opt"] + 1) % 3, ds["opt"]))
    reports = [hypotheses.report(ds), hypotheses.report(moved)]
    assert hypotheses.summarize(reports)["signal_opt_fraction"] == 0.75  # the worst seed
    assert "signal_opt_fraction" not in hypotheses.report(_two_samples())
