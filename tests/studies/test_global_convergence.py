"""The global-convergence study: perturbed data, random initialisations, batched runs,
the long table and its summary.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.data import hypotheses, models
from attnbias.optim.spec import OptimizerSpec, resolve
from attnbias.studies import global_convergence
from attnbias.training import kernel, kernel_library, metrics

SIZES = dict(n=6, T=4, d=20)


NGD = OptimizerSpec("ngd", lr=0.1)


def _draw(seed=0, **knobs):
    return models.perturbed_example1(np.random.default_rng(seed), **SIZES, **knobs)


def _base(seed=0):
    return models.example1(np.random.default_rng(seed), **SIZES)


def _scores(ds):
    return models.token_scores(ds["X"], ds["y"], ds["u"])


# ---------------------------------------------------------------- perturbed_example1


def test_zero_knobs_reproduce_example1_and_draw_nothing_more():
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    ds = models.perturbed_example1(rng_a, **SIZES, correlation=0.0, score_spread=0.0)
    base = models.example1(rng_b, **SIZES)
    assert ds.keys() == base.keys()
    for key in base:
        np.testing.assert_array_equal(ds[key], base[key])
    # no extra random numbers were drawn: both generators are in the same state
    assert rng_a.standard_normal() == rng_b.standard_normal()


def test_correlation_keeps_scores_and_makes_tokens_less_orthogonal():
    base, ds = _base(), _draw(correlation=1.0)
    np.testing.assert_allclose(_scores(ds), _scores(base), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(ds["opt"], base["opt"])
    # one shared shift, orthogonal to u, added to every token
    shift = (ds["X"] - base["X"]).reshape(-1, SIZES["d"])
    np.testing.assert_allclose(shift, np.broadcast_to(shift[0], shift.shape), atol=1e-14)
    assert shift[0, 0] == 0.0 and np.linalg.norm(shift[0]) > 0.5
    before, after = models.assumption_report(base), models.assumption_report(ds)
    assert after["max_offdiag_inner"] > before["max_offdiag_inner"]
    assert after["max_nonopt_score_spread"] == pytest.approx(before["max_nonopt_score_spread"])
    knobs_before, knobs_after = (
        global_convergence.knob_report(base),
        global_convergence.knob_report(ds),
    )
    assert knobs_after["max_offdiag_inner_orth_u"] > 2 * knobs_before["max_offdiag_inner_orth_u"]
    assert knobs_after["max_noise_score_spread"] == pytest.approx(0.0, abs=1e-14)


def test_score_spread_makes_nonoptimal_scores_unequal_and_keeps_opt_best():
    base, ds = _base(), _draw(score_spread=0.6)
    gamma, gamma_base = _scores(ds), _scores(base)
    rows = np.arange(SIZES["n"])
    np.testing.assert_array_equal(ds["opt"], np.argmax(gamma, axis=1))
    np.testing.assert_array_equal(ds["opt"], base["opt"])  # the signal token stays optimal
    # only the noise tokens' scores moved, each up by something in [0, 0.6)
    extra = gamma - gamma_base
    np.testing.assert_array_equal(extra[:, 0], 0.0)
    np.testing.assert_array_equal(extra[rows, ds["opt"]], 0.0)
    assert np.all((extra >= 0) & (extra < 0.6))
    # and nothing but the scores: the components orthogonal to u are untouched
    np.testing.assert_array_equal(ds["X"][..., 1:], base["X"][..., 1:])
    assert global_convergence.knob_report(base)["max_noise_score_spread"] == 0.0
    assert global_convergence.knob_report(ds)["max_noise_score_spread"] > 0.1
    assert models.assumption_report(ds)["max_nonopt_score_spread"] > 0
    assert models.assumption_report(ds)["min_opt_score_gap"] > 0


def test_knobs_together_are_deterministic():
    a, b = (
        _draw(seed=5, correlation=0.5, score_spread=0.5),
        _draw(seed=5, correlation=0.5, score_spread=0.5),
    )
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize(
    "knobs",
    [
        dict(score_spread=1.0),
        dict(score_spread=1.5),
        dict(score_spread=0.8, opt_signal=0.8, query_signal=0.2),
        dict(score_spread=-0.1),
        dict(correlation=-1.0),
    ],
)
def test_bad_knobs_raise(knobs):
    with pytest.raises(models.DataError):
        _draw(**knobs)


# ---------------------------------------------------------------- random_initialisations


def test_random_initialisations_scales_and_directions():
    W0s, scales = global_convergence.random_initialisations(
        np.random.default_rng(0), 7, 9, [1.0, 5.0, 20.0]
    )
    assert W0s.shape == (9, 7, 7)
    np.testing.assert_array_equal(scales, [1, 5, 20] * 3)
    np.testing.assert_allclose(np.linalg.norm(W0s, axis=(1, 2)), scales, rtol=1e-13)
    units = (W0s / scales[:, None, None]).reshape(9, -1)
    cosines = units @ units.T
    np.fill_diagonal(cosines, 0.0)
    assert np.abs(cosines).max() < 0.9  # distinct random directions
    again, _ = global_convergence.random_initialisations(
        np.random.default_rng(0), 7, 9, [1.0, 5.0, 20.0]
    )
    np.testing.assert_array_equal(W0s, again)


def test_random_initialisations_rejects_empty():
    with pytest.raises(ValueError):
        global_convergence.random_initialisations(np.random.default_rng(0), 3, 0, [1.0])
    with pytest.raises(ValueError):
        global_convergence.random_initialisations(np.random.default_rng(0), 3, 2, [])


# ---------------------------------------------------------------- run_setting

SMALL = dict(n=4, T=4, d=12)


@pytest.fixture(scope="module")
def small_problem():
    ds = models.perturbed_example1(np.random.default_rng(1), **SMALL)
    W0s, scales = global_convergence.random_initialisations(
        np.random.default_rng(2), SMALL["d"], 6, [1, 4]
    )
    return ds, W0s, scales


def _run(ds, W0s, spec=NGD, **kw):
    kw = dict(iterations=300, threshold=0.05, log_points=30) | kw
    table, _ = global_convergence.run_setting(ds, W0s, spec, **kw)
    return table


def test_run_setting_ngd_reaches_a_loose_threshold(small_problem):
    ds, W0s, scales = small_problem
    out = _run(ds, W0s)
    assert list(out.columns) == global_convergence.RUN_COLUMNS
    np.testing.assert_array_equal(out["run"], np.arange(6))
    np.testing.assert_allclose(out["scale"], scales, rtol=1e-13)
    assert out["reached"].all() and (out["outcome"] == "reached").all()
    assert (out["final_gap"] < 0.05).all()
    assert (out["final_effective_gap"] < out["final_gap"]).all()
    assert (out["final_opt_softmax"] > 0.9).all()
    grid = metrics.log_grid(300, 30)
    assert out["first_iteration"].isin(grid).all()
    assert (out["first_iteration"] > 0).all()  # random starts are far from W_mm
    # a larger scale starts further from W_mm's norm and needs longer
    mean_first = out.groupby("scale")["first_iteration"].mean()
    assert mean_first[4] > mean_first[1]


def test_run_setting_threshold_that_is_not_met(small_problem):
    ds, W0s, _ = small_problem
    out = _run(ds, W0s, threshold=1e-12)
    assert not out["reached"].any()
    # NGD's gaps still fall fast at t = 300: undecided at this horizon, none failed
    assert (out["outcome"] == "undecided").all() and (out["late_slope"] < -1).all()
    assert out["first_iteration"].isna().all()
    pd.testing.assert_series_equal(out["final_gap"], _run(ds, W0s)["final_gap"])


def test_run_setting_deterministic_and_batching_invariant(small_problem):
    ds, W0s, _ = small_problem
    first, second = _run(ds, W0s), _run(ds, W0s)
    pd.testing.assert_frame_equal(first, second)
    for k in (0, 3):
        alone = _run(ds, W0s[k : k + 1]).iloc[0]
        assert alone["final_gap"] == pytest.approx(first["final_gap"][k], rel=0, abs=1e-12)
        assert alone["first_iteration"] == first["first_iteration"][k]


@pytest.mark.parametrize("backend", ["c", "torch"])
def test_run_setting_keeps_the_other_runs_when_one_diverges(small_problem, monkeypatch, backend):
    """A run whose metrics stop being finite (here a NaN in its W0) gets NaN on every
    backend (the loop's nonfinite="nan"), and the other runs of its batch keep theirs."""
    ds, W0s, _ = small_problem
    reference = _run(ds, W0s)
    if backend == "torch":
        monkeypatch.setattr(kernel, "supports", lambda spec, rule=None: False)  # dispatch: torch
    poisoned = W0s.copy()
    poisoned[4, 0, 0] = np.nan
    out = _run(ds, poisoned)
    assert out["outcome"].tolist() == ["reached"] * 4 + ["left_float64", "reached"]
    lost = out.iloc[4]
    assert not lost["reached"]
    assert lost[["final_gap", "first_iteration", "final_effective_gap"]].isna().all()
    kept = out.drop(index=4)
    for column in ("final_gap", "final_effective_gap"):
        np.testing.assert_allclose(kept[column], reference.drop(index=4)[column], atol=1e-12)
    assert kept["reached"].all()


def test_effective_gap_ignores_the_inert_part_of_W0(small_problem):
    """W0 (I - P) never moves and the model never sees it: adding it to W0 changes gap_W
    but not the effective gap; for W0 in the query span the two gaps agree."""
    ds, W0s, _ = small_problem
    queries = ds["X"][:, 0]
    P = np.linalg.pinv(queries) @ queries
    inside = W0s[:2] @ P
    rng = np.random.default_rng(9)
    outside = inside + 30.0 * rng.standard_normal(inside.shape) @ (np.eye(SMALL["d"]) - P)
    a, b = _run(ds, inside), _run(ds, outside)
    np.testing.assert_allclose(a["final_effective_gap"], a["final_gap"], rtol=1e-8)
    np.testing.assert_allclose(b["final_effective_gap"], a["final_effective_gap"], rtol=1e-8)
    assert (b["final_gap"] > 10 * a["final_gap"]).all()
    assert not b["reached"].any()  # the inert part alone keeps gap_W above the threshold


def test_effective_gap_by_hand():
    queries = np.eye(3)[:2]  # span{e_1, e_2}
    W_mm = np.zeros((3, 3))
    W_mm[0, 0] = 2.0
    W = np.zeros((2, 3, 3))
    W[0, 0, 0], W[0, 1, 2] = 5.0, 7.0  # the e_3 column is invisible: same direction as W_mm
    W[1, 0, 0], W[1, 0, 1] = 1.0, 1.0  # 45 degrees from W_mm
    np.testing.assert_allclose(
        global_convergence.effective_gap(W, W_mm, queries), [0.0, 1 - np.sqrt(0.5)], atol=1e-15
    )


# ---------------------------------------------------------------- study_table and summary

SETTINGS = [
    dict(name="plain", **SMALL),
    dict(name="spread", score_spread=0.5, **SMALL),
    dict(name="correlated", correlation=1.0, **SMALL),
]


OPTIMIZERS = resolve({"gd": dict(rule="gd", lr=1.0), "ngd": dict(rule="ngd", lr=0.1)}, real=False)


def _study(seed=0):
    return global_convergence.study_table(
        SETTINGS,
        OPTIMIZERS,
        inits=4,
        scales=[1.0, 3.0],
        iterations=100,
        threshold=0.05,
        seed=seed,
        log_points=20,
    )


@pytest.fixture(scope="module")
def small_study():
    return _study()


def test_study_table_shape_and_columns(small_study):
    table, assumptions, record = small_study
    assert record == kernel_library.kernel_info()  # what the study job's file stores
    assert list(table.columns) == global_convergence.TABLE_COLUMNS
    assert len(table) == 3 * 2 * 4
    assert table.groupby(["setting", "optimizer"]).size().eq(4).all()
    assert table["setting"].unique().tolist() == ["plain", "spread", "correlated"]
    np.testing.assert_array_equal(table["scale"], [1.0, 3.0] * 12)
    by_setting = table.groupby("setting", sort=False)[["correlation", "score_spread"]].first()
    assert by_setting.loc["spread"].tolist() == [0.0, 0.5]
    assert by_setting.loc["correlated"].tolist() == [1.0, 0.0]
    assert assumptions["setting"].tolist() == ["plain", "spread", "correlated"]
    expected = {"setting", "correlation", "score_spread"}
    expected |= set(models.assumption_report(_draw())) | set(
        global_convergence.knob_report(_draw())
    )
    expected |= set(hypotheses.report(_draw()))  # Ass. 1 and 2 as the claims table reads them
    assert set(assumptions.columns) == expected
    assert assumptions.set_index("setting").loc["spread", "ass2_holds"] == False  # noqa: E712
    # the knobs show up in the quantities they are meant to move
    a = assumptions.set_index("setting")
    assert a.loc["plain", "max_noise_score_spread"] == 0.0
    assert a.loc["spread", "max_noise_score_spread"] > 0.0
    assert (
        a.loc["correlated", "max_offdiag_inner_orth_u"] > a.loc["plain", "max_offdiag_inner_orth_u"]
    )


def test_study_table_is_deterministic_and_seeded(small_study):
    table, assumptions, _ = small_study
    again, assumptions_again, _ = _study()
    pd.testing.assert_frame_equal(table, again)
    pd.testing.assert_frame_equal(assumptions, assumptions_again)
    other, *_ = _study(seed=1)
    assert not np.allclose(table["final_gap"], other["final_gap"])


def test_study_table_ngd_ahead_of_gd(small_study):
    table, *_ = small_study
    gaps = table.groupby("optimizer")["final_gap"].median()
    assert gaps["ngd"] < gaps["gd"]


def test_study_table_rejects_duplicate_names():
    with pytest.raises(ValueError, match="unique"):
        global_convergence.study_table(
            [SETTINGS[0], SETTINGS[0]],
            OPTIMIZERS,
            inits=1,
            scales=[1.0],
            iterations=1,
            threshold=0.1,
            seed=0,
        )
