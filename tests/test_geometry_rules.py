"""The direction rules of attnbias.optim.rules (sign, nsd, muon, adam, mirror, kq): each
step against numbers computed by hand; the full-W path (training.full_matrix) against the
C kernel on GD and NGD; which backend a rule trains on, decided from what it declares; and
the extra_metrics hook on every backend."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attnbias.data import models
from attnbias.optim import directions, rules
from attnbias.optim.directions import Block, QueryBasis
from attnbias.optim.rule import run_seed
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm import max_margin
from attnbias.training import dispatch, kernel, loop
from attnbias.training.full_matrix import FullMatrixStepper
from attnbias.training.kernel import KernelStepper
from attnbias.training.metrics import log_grid
from attnbias.training.token_problem import TokenProblem
from attnbias.workflow.train_job import train_seeds


def _step(spec, W0, blocks, steps=None):
    """W after the rule's steps from W0 (B = 1), each step's gradient a Block of W."""
    params = {"W": np.array(W0, dtype=float)[None]}
    update = rules.get(spec.rule).update(spec, params, [0])
    for t, block in enumerate(blocks if steps is None else steps):
        update.step(t, params, {"W": block})
    return params["W"][0]


def _block(G, log_scale=0.0):
    return Block(np.array([log_scale]), np.array(G, dtype=float)[None])


def _factored(left, Q, log_scale=0.0):
    """G~ = left @ Q, as full_matrix hands it to the spectral rules."""
    basis = QueryBasis.of(np.array(Q, dtype=float)[None])
    return Block(np.array([log_scale]), None, np.array(left, dtype=float)[None], basis)


def test_sign_descent_steps_by_sign_and_its_schedule():
    G = [[0.5, -2.0], [0.0, 3.0]]
    W = _step(OptimizerSpec("sign", lr=0.1), np.zeros((2, 2)), [_block(G, -900.0)])
    assert np.array_equal(W, [[-0.1, 0.1], [0.0, -0.1]])  # scale-free: e^-900 changes nothing
    sqrt = OptimizerSpec("sign", lr=0.1, schedule="sqrt")
    W = _step(sqrt, np.zeros((2, 2)), [_block(G) for _ in range(4)])
    steps = 0.1 * (1 + 1 / math.sqrt(2) + 1 / math.sqrt(3) + 1 / 2)  # lr / sqrt(t + 1)
    np.testing.assert_allclose(W, [[-steps, steps], [0.0, -steps]], rtol=1e-15)


def test_lp_steepest_descent_by_hand():
    """p = 3, q = 3/2: D = sign(G) |G|^(1/2) / ||G||_(3/2)^(1/2); for G = [1, -4; 0, 0]:
    ||G||_(3/2) = (1 + 8)^(2/3), so D = [1, -2; 0, 0] / 9^(1/3) (||D||_3 = 1)."""
    W = _step(OptimizerSpec("nsd", lr=0.5, norm="l3"), np.ones((2, 2)), [_block([[1, -4], [0, 0]])])
    c = 0.5 / 9 ** (1 / 3)
    np.testing.assert_allclose(W, [[1 - c, 1 + 2 * c], [1, 1]], rtol=1e-14)
    max_norm = OptimizerSpec("nsd", lr=0.5, norm="max")
    W = _step(max_norm, np.zeros((2, 2)), [_block([[1, -4], [0, 2]])])
    assert np.array_equal(W, [[-0.5, 0.5], [0, -0.5]])  # max: sign descent


def test_spectral_steepest_descent_by_hand():
    """G = v v^T with v = (1, 2), given as left @ Q with Q = diag(2, 1): U V^T = v v^T / 5."""
    block = _factored([[0.5, 2.0], [1.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]], -5000.0)
    W = _step(OptimizerSpec("nsd", lr=1.0, norm="spectral"), np.zeros((2, 2)), [block])
    np.testing.assert_allclose(W, -np.array([[0.2, 0.4], [0.4, 0.8]]), rtol=1e-14)
    # full rank: G = diag(3, -2) has U V^T = diag(1, -1)
    block = _factored([[3.0, 0.0], [0.0, -2.0]], np.eye(2))
    W = _step(OptimizerSpec("nsd", lr=1.0, norm="spectral"), np.zeros((2, 2)), [block])
    np.testing.assert_allclose(W, [[-1.0, 0.0], [0.0, 1.0]], atol=1e-15)


def test_muon_mixes_gradients_of_astronomically_small_scales():
    """beta = 0.5: M_1 = G_1 = e^s A, M_2 = 0.5 G_1 + G_2 with G_2 = 2 e^s B, s = -1000 (each
    e^s underflows to 0 in floats). A = e_11, B = e_12: M_2 ~ [0.5, 2; 0, 0], rank one, so
    D_2 = M_2 / ||M_2|| = [0.5, 2; 0, 0] / sqrt(4.25); D_1 = U V^T(A) = A."""
    s = -1000.0
    steps = [
        _factored([[1.0, 0.0], [0.0, 0.0]], np.eye(2), s),
        _factored([[0.0, 1.0], [0.0, 0.0]], np.eye(2), s + math.log(2.0)),
    ]
    W = _step(OptimizerSpec("muon", lr=0.1, beta=0.5), np.zeros((2, 2)), steps)
    D1, D2 = np.array([[1.0, 0], [0, 0]]), np.array([[0.5, 2.0], [0, 0]]) / math.sqrt(4.25)
    expected = -0.1 * (D1 + D2)
    np.testing.assert_allclose(W, expected, rtol=1e-12)  # an SVD: a few ulps per entry


def test_adam_by_hand_with_bias_correction():
    """Two steps, scale e^0: m = (1-b1) g1, then b1 m + (1-b1) g2; v likewise with g^2;
    step lr m / (1 - b1^t) / (sqrt(v / (1 - b2^t)) + eps)."""
    lr, b1, b2, eps = 0.1, 0.5, 0.75, 0.1
    g1, g2 = np.array([[1.0, -2.0]]), np.array([[3.0, 0.0]])
    W = _step(OptimizerSpec("adam", lr=lr, beta1=b1, beta2=b2, eps=eps), np.zeros((1, 2)),
              [_block(g1), _block(g2)])  # fmt: skip
    step1 = lr * np.array([1.0, -2.0]) / (np.array([1.0, 2.0]) + eps)  # m^ = g1, v^ = g1^2
    m = np.array([b1 * (1 - b1) * 1 + (1 - b1) * 3, b1 * (1 - b1) * -2])
    v = np.array([b2 * (1 - b2) * 1 + (1 - b2) * 9, b2 * (1 - b2) * 4])
    step2 = lr * (m / (1 - b1**2)) / (np.sqrt(v / (1 - b2**2)) + eps)
    np.testing.assert_allclose(W[0], -(step1 + step2), rtol=1e-14)


def test_adam_against_eps_where_the_gradient_squared_underflows():
    """g = e^-400 (2, -3): g^2 ~ e^-800 underflows to 0 in floats, so the plain formula
    gives lr g / eps = 1e126 with eps = 1e-300; exactly, sqrt(v^) = |g| >> eps and the first
    step is lr sign(g) (to eps / |g| ~ 1e-127)."""
    W = _step(OptimizerSpec("adam", lr=0.1, eps=1e-300), np.zeros((1, 2)),
              [_block([[2.0, -3.0]], -400.0)])  # fmt: skip
    np.testing.assert_allclose(W[0], [-0.1, 0.1], rtol=1e-14)


def test_mirror_descent_by_hand():
    """p = 3: Z0 = sign(W0)|W0|^2 = (1, -4); Z1 = Z0 - lr G = (1, -4) - 0.5 (2, 2) = (0, -5);
    W1 = sign(Z1) |Z1|^(1/2) = (0, -sqrt 5)."""
    W = _step(OptimizerSpec("mirror", lr=0.5, p=3.0), [[1.0, -2.0]], [_block([[2.0, 2.0]])])
    np.testing.assert_allclose(W[0], [0.0, -math.sqrt(5)], atol=1e-15)
    # the gradient's scale is absolute here: e^s G with s = log 0.5 halves the step
    half = _block([[2.0, 2.0]], math.log(0.5))
    W = _step(OptimizerSpec("mirror", lr=1.0, p=3.0), [[1.0, -2.0]], [half])
    np.testing.assert_allclose(W[0], [0.0, -math.sqrt(5)], atol=1e-15)


def test_kq_steps_k_and_q_from_a_start_drawn_from_the_data():
    """W = W0 + K Q^T; one step: K1 = K0 - lr G Q0, Q1 = Q0 - lr G^T K0. The start is a
    function of the run's seed: the same seed gives the same K0, Q0."""
    spec = OptimizerSpec("kq", lr=0.5, init_scale=0.3)
    W0 = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    params = {"W": W0.copy()}
    update = rules.get("kq").update(spec, params, [7])
    draws = 0.3 * np.random.default_rng(7).standard_normal((2, 2, 2))
    K0, Q0 = draws[0], draws[1]
    np.testing.assert_allclose(params["W"][0], W0[0] + K0 @ Q0.T, rtol=1e-15)
    G = np.array([[1.0, 2.0], [0.0, -1.0]])
    update.step(0, params, {"W": _block(G)})
    K1, Q1 = K0 - 0.5 * G @ Q0, Q0 - 0.5 * G.T @ K0
    np.testing.assert_allclose(params["W"][0], W0[0] + K1 @ Q1.T, rtol=1e-14)
    ds = models.generate("example1", 0, dict(n=3, T=2, d=4))
    assert run_seed(ds["X"], ds["W0"]) == run_seed(ds["X"].copy(), ds["W0"])


def test_every_rule_declares_its_implicit_norm():
    expected = {"gd": "fro", "ngd": "fro", "polyak": "fro", "sign": "max", "adam": "max",
                "muon": "spectral", "kq": "nuclear"}  # fmt: skip
    for name, norm in expected.items():
        assert OptimizerSpec(name).implicit_norm() == norm
    assert OptimizerSpec("nsd", norm="l1.5").implicit_norm() == "l1.5"
    assert OptimizerSpec("mirror", p=3.0).implicit_norm() == "l3"
    assert directions.descent_norm("l1.5") == ("lp", 1.5)


# ---------------------------------------------------------------- the full-W path


def _problem(train_u: bool, seeds=(0, 1)):
    dss = [models.generate("example1", s, dict(n=6, T=4, d=10)) for s in seeds]
    sols = [max_margin.to_arrays(max_margin.solve_for_dataset(ds, train_u, "t")) for ds in dss]
    W_mm = np.stack([s["W_mm"] for s in sols])
    u_mm = np.stack([s["u_mm"] for s in sols]) if train_u else None
    return dss, W_mm, u_mm


def _assert_relatively_equal(a, b, rtol=1e-10):
    both_nan = np.isnan(a) & np.isnan(b)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    scale = np.maximum(np.abs(a), np.abs(b))
    assert np.all((np.abs(a - b) <= rtol * scale) | both_nan)


@pytest.mark.parametrize("train_u", [False, True])
@pytest.mark.parametrize(
    "spec", [OptimizerSpec("gd", lr=1.0), OptimizerSpec("ngd", lr=0.1)], ids=["gd", "ngd"]
)
def test_the_full_matrix_path_equals_the_kernel(spec, train_u):
    dss, W_mm, u_mm = _problem(train_u)
    kw = dict(iterations=300, log_iterations=log_grid(300, 10), W_mm=W_mm, u_mm=u_mm,
              train_u=train_u)  # fmt: skip
    table, final = loop.train(KernelStepper, TokenProblem(dss), spec, **kw)
    full_table, full_final = loop.train(FullMatrixStepper, TokenProblem(dss), spec, **kw)
    assert list(table) == list(full_table)
    for name in table:
        _assert_relatively_equal(table[name], full_table[name])
    for name in final:
        _assert_relatively_equal(final[name], full_final[name])


@pytest.mark.parametrize(
    "spec",
    [
        OptimizerSpec("sign", lr=0.01),
        OptimizerSpec("nsd", lr=0.05, norm="l3"),
        OptimizerSpec("nsd", lr=0.05, norm="spectral", schedule="sqrt"),
        OptimizerSpec("muon", lr=0.05),
        OptimizerSpec("adam", lr=0.01),
        OptimizerSpec("mirror", lr=1.0, p=3.0),
        OptimizerSpec("kq", lr=1.0, init_scale=0.1),
    ],
    ids=lambda s: s.caption(),
)
def test_each_direction_rule_trains_through_the_dispatcher(spec):
    """On the full W, batched: finite, the loss falls, and each run is what it is alone."""
    dss, W_mm, u_mm = _problem(True)
    grid = log_grid(200, 8)
    kw = dict(W_mm=W_mm, u_mm=u_mm, iterations=200, log_iterations=grid, train_u=True)
    table, final, record = dispatch.train(dss, spec, **kw)
    assert record["backend"] == "full" and dispatch.backend("cuda", "float32", spec) == "full"
    assert np.isfinite(table["log_loss"]).all() and np.isfinite(final["W"]).all()
    assert (table["log_loss"][:, -1] < table["log_loss"][:, 0]).all()
    alone, _, _ = dispatch.train(dss[1:], spec, **(kw | dict(W_mm=W_mm[1:], u_mm=u_mm[1:])))
    for name in alone:
        np.testing.assert_allclose(alone[name][0], table[name][1], rtol=1e-12, equal_nan=True)


# ---------------------------------------------------------------- backend choice


def _supports_by_fields(spec) -> bool:
    """A check by the spec's field list (the negative control): every field of the spec
    had to be a setting the kernel reads."""
    if spec.rule not in kernel.RULE_CODES:
        return False
    return not {f.name for f in dataclasses.fields(spec)} - kernel.KERNEL_SETTINGS


def test_a_new_setting_keeps_gd_ngd_and_ps_on_the_kernel():
    """OptimizerSpec gained settings the kernel does not read (schedule, norm, beta, ...):
    the old check moved GD, NGD and PS to torch; the rule's declaration keeps them on C."""
    for name in ("gd", "ngd", "polyak"):
        spec = OptimizerSpec(name)
        assert not _supports_by_fields(spec)  # the negative control: the field-list check's bug
        assert kernel.supports(spec)
        assert dispatch.backend("cpu", "float64", spec) == "c"

    @dataclasses.dataclass(frozen=True)
    class WithOneMore(OptimizerSpec):  # a setting added after this test was written
        nesterov: bool = False

    assert kernel.supports(WithOneMore("ngd", lr=0.1))
    needs = {"nsd": dict(norm="max"), "mirror": dict(p=3.0)}
    for name, rule in rules.RULES.items():
        assert kernel.supports(OptimizerSpec(name, **needs.get(name, {}))) == (
            rule.kernel_code is not None
        )


# ---------------------------------------------------------------- extra_metrics


def _extra(W, u):
    return {"W_sum": W.sum(axis=(1, 2)), "u_first": u[:, 0].copy()}


@pytest.mark.parametrize(
    ("spec", "dtype", "expected_backend"),
    [
        (OptimizerSpec("ngd", lr=0.1), "float64", "c"),
        (OptimizerSpec("ngd", lr=0.1), "float32", "torch"),
        (OptimizerSpec("sign", lr=0.01), "float64", "full"),
    ],
    ids=["c", "torch", "full"],
)
def test_extra_metrics_on_every_backend(spec, dtype, expected_backend):
    dss, W_mm, u_mm = _problem(True)
    kw = dict(W_mm=W_mm, u_mm=u_mm, iterations=50, log_iterations=log_grid(50, 5), train_u=True,
              dtype=dtype)  # fmt: skip
    plain, plain_final, record = dispatch.train(dss, spec, **kw)
    hooked, final, _ = dispatch.train(dss, spec, extra_metrics=_extra, **kw)
    assert record["backend"] == expected_backend
    assert set(hooked) - set(plain) == {"W_sum", "u_first"}
    for name in plain:  # the hook changes nothing else, bitwise
        np.testing.assert_array_equal(plain[name], hooked[name])
    np.testing.assert_array_equal(plain_final["W"], final["W"])
    np.testing.assert_allclose(hooked["W_sum"][:, -1], final["W"].sum(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_allclose(hooked["u_first"][:, -1], final["u"][:, 0], rtol=1e-6)
    assert hooked["W_sum"].shape == plain["log_loss"].shape


def test_the_job_passes_extra_metrics():
    dss, W_mm, _ = _problem(False)
    train = dict(iterations=20, log_points=4, grid="log", train_u=False, loss="exponential")
    svms = [{"W_mm": W} for W in W_mm]
    _, metrics, finals, _ = train_seeds(dss, svms, train, {"rule": "ngd", "lr": 0.1},
                                        extra_metrics=_extra)  # fmt: skip
    assert metrics[1]["W_sum"][-1] == pytest.approx(finals[1]["W"].sum(), rel=1e-12)
