"""Every backend's gradient, and every rule's first step on every backend that trains it,
against the extended-precision oracle (gradient_oracle) where the attention has saturated
on a token that is not the stored optimal one: the regime of joint training, large random
starts and bad directions, where a gradient referred to the optimal token cancels
catastrophically (docs/findings.md, "The exact gradient").

The configurations: random tokens, a decoder u and the tokens that are optimal under it,
and a W solved so that each sequence's logits put token r_i != opt_i ahead of the next by
exactly `gap` (5 to 700: the attention off r_i is about e^-gap, down to 1e-304). The
decoder is fixed (its scores constant) or trained (its scores recomputed each step, and
its own gradient checked).
"""

from __future__ import annotations

import math

import gradient_oracle
import numpy as np
import pytest
import torch

from attnbias.model import attention, gradients
from attnbias.model.gradient_weights import u_direction, w_token_sums
from attnbias.model.losses import get_loss
from attnbias.optim import rules
from attnbias.optim.directions import Block
from attnbias.optim.spec import OptimizerSpec
from attnbias.training import full_matrix, kernel, loop, torch_loop
from attnbias.training.full_matrix import FullMatrixStepper
from attnbias.training.kernel import KernelStepper
from attnbias.training.token_problem import TokenProblem
from attnbias.training.torch_loop import TorchStepper

GAPS = [5.0, 30.0, 100.0, 300.0, 700.0]
LOSSES = ["exponential", "logistic"]
REL = 1e-10  # relative error allowed, in the Frobenius norm
SIGN_FLOOR = 1e-12  # entries above this fraction of the norm must carry the oracle's sign


def saturated(gap: float, seed: int = 0, n: int = 3, T: int = 4, d: int = 5) -> dict:
    """A dataset (data file contract) whose attention at W0 sits on a non-optimal token of
    every sequence, `gap` ahead of the next logit."""
    rng = np.random.default_rng(seed)
    X = 2.0 * rng.standard_normal((n, T, d))
    y = rng.choice([-1.0, 1.0], size=n)
    u = 0.5 * rng.standard_normal(d)
    gamma = y[:, None] * (X @ u)
    opt = np.argmax(gamma, axis=1)
    top = (opt + 1 + rng.integers(0, T - 1, size=n)) % T  # never opt
    logits = -rng.uniform(0.0, 3.0, size=(n, T))
    # `gap` over the best of the rest
    logits[np.arange(n), top] = gap + np.max(np.where(np.eye(T)[top] > 0, -np.inf, logits), 1)
    # x_it^T W x_i1 = <vec W, x_it (x) x_i1>: the least-norm W with these logits
    rows = np.einsum("ntj,nk->ntjk", X, X[:, 0]).reshape(n * T, d * d)
    W0 = np.linalg.lstsq(rows, logits.reshape(-1), rcond=None)[0].reshape(d, d)
    reached = np.einsum("ntj,jk,nk->nt", X, W0, X[:, 0])
    assert np.all(np.argmax(reached, axis=1) == top)
    assert np.all(np.argmax(reached, axis=1) != opt)
    second = np.sort(reached, axis=1)[:, -2]
    np.testing.assert_allclose(reached.max(axis=1) - second, gap, rtol=1e-9)
    return dict(X=X, y=y, u=u, opt=opt, W0=W0)


def oracle(ds: dict, loss: str, gap: float, W=None, u=None) -> gradient_oracle.OracleGradient:
    W = ds["W0"] if W is None else W
    u = ds["u"] if u is None else u
    return gradient_oracle.gradients(
        ds["X"], ds["y"], u, W, loss, dps=gradient_oracle.digits_for(gap)
    )


def assert_matches(got: np.ndarray, want_unit: np.ndarray, what: str) -> None:
    """`got` points along the unit `want_unit` to REL, and every entry of want above
    SIGN_FLOOR carries its sign."""
    norm = np.linalg.norm(got)
    assert norm > 0, f"{what}: zero"
    error = np.linalg.norm(got / norm - want_unit)
    assert error <= REL, f"{what}: relative error {error:.3g}"
    big = np.abs(want_unit) > SIGN_FLOOR
    wrong = np.sign(got[big]) != np.sign(want_unit[big])
    assert not wrong.any(), f"{what}: {wrong.sum()} of {big.sum()} signs wrong"


# ---------------------------------------------------------------- the gradients themselves


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("gap", GAPS)
def test_torch_gradients_match_the_oracle(gap, loss):
    ds = saturated(gap)
    want = oracle(ds, loss, gap)
    problem = attention.Problem.from_arrays([ds])
    # the decoder trained: scores of both signs around the stored opt
    scores = attention.token_scores(problem, problem.u0, check_order=False)
    fwd = attention.forward(problem, problem.zero_coordinates(), scores)
    gW = gradients.w_gradient(problem, fwd, get_loss(loss))
    gu = gradients.u_gradient(problem, fwd, get_loss(loss))
    assert_matches((gW.direction[0] @ problem.Q[0]).numpy(), want.dir_W, "torch grad_W")
    assert_matches(gu.direction[0].numpy(), want.dir_u, "torch grad_u")
    assert gW.log_norm.item() == pytest.approx(want.log_norm_W, rel=REL, abs=REL)
    assert gu.log_norm.item() == pytest.approx(want.log_norm_u, rel=REL, abs=REL)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("gap", GAPS)
def test_numpy_gradients_match_the_oracle(gap, loss):
    ds = saturated(gap, seed=1)
    want = oracle(ds, loss, gap)
    problem = TokenProblem([ds])
    scores = problem.scores(np.zeros((1, problem.n * problem.T)))
    logits = np.einsum("ntj,jk,nk->nt", ds["X"], ds["W0"], ds["X"][:, 0])[None]
    fwd = problem.forward_of(logits, scores, signed=True)
    log_neg_slope = get_loss(loss).log_neg_slope(fwd["margin"])
    log_scale, v = w_token_sums(np, log_neg_slope, fwd["log_attn"], scores[0], problem.X)
    G = np.swapaxes(v, 1, 2)[0] @ problem.Q[0] / problem.n
    assert_matches(G, want.dir_W, "numpy grad_W")
    assert math.log(np.linalg.norm(G)) + log_scale[0] == pytest.approx(want.log_norm_W, rel=REL)
    x_bar = (np.exp(fwd["log_attn"])[..., None, :] @ problem.X)[..., 0, :]
    log_scale_u, g_u = u_direction(np, log_neg_slope, problem.y, x_bar)
    assert_matches(g_u[0], want.dir_u, "numpy grad_u")


def test_the_regime_is_the_one_that_cancels():
    """Referring the weights to the stored optimal token (the form the project had until
    2026-11-28: v = sum_t w_t x_t - (sum_t w_t) x_bar) fails these tests: the configurations
    do test the cancellation."""
    ds = saturated(300.0)
    want = oracle(ds, "exponential", 300.0)
    problem = attention.Problem.from_arrays([ds])
    fwd = attention.forward(
        problem, problem.zero_coordinates(), attention.token_scores(problem, problem.u0)
    )
    s = fwd.scores
    log_w = get_loss("exponential").log_neg_slope(fwd.margin)[..., None] + fwd.log_attn
    log_w = log_w + s.log_abs_gap
    w = s.gap_sign * torch.exp(log_w - log_w.amax())
    v = (w[..., None, :] @ problem.X)[..., 0, :] - w.sum(-1, keepdim=True) * fwd.x_bar
    old = (v.transpose(1, 2)[0] @ problem.Q[0]).numpy()
    with pytest.raises(AssertionError):
        assert_matches(old, want.dir_W, "referred to opt")


# ---------------------------------------------------------------- every rule, every backend

# one spec per rule, its step made of order one at the saturated state (lr of GD-like rules
# over the gradient's norm, Polyak's cap likewise, NGD normalised per block), so that
# W1 - W0 measures the direction. Polyak normalises globally only: with u trained, the
# u-gradient (of order one) sets its step, W's is of the size of e^-gap and only u's is
# compared (W's gradient is the one NGD's per-block step measures).
SPECS = {
    "gd": lambda g: dict(lr=math.exp(-g.log_norm_W), lr_u=math.exp(-g.log_norm_u)),
    "ngd": lambda g: dict(lr=1.0, normalize="per_block"),
    "polyak": lambda g: dict(eta_max=math.exp(-g.log_norm_W), f_star=0.0),
    "sign": lambda g: dict(lr=1.0),
    "nsd": lambda g: dict(lr=1.0, norm="l3"),
    "muon": lambda g: dict(lr=1.0),
    "adam": lambda g: dict(lr=max(1.0, 1e-8 * math.exp(-g.log_norm_W)), lr_u=1.0),
    "mirror": lambda g: dict(lr=math.exp(-g.log_norm_W), lr_u=math.exp(-g.log_norm_u), p=3.0),
    "kq": lambda g: dict(lr=1e4 * math.exp(-g.log_norm_W), lr_u=math.exp(-g.log_norm_u)),
}
EXTRA = {"nsd": [dict(norm="max"), dict(norm="spectral")]}


def test_every_rule_has_a_spec_here():
    assert set(SPECS) == set(rules.RULES)


def _specs():
    for name in rules.RULES:
        yield name, {}
        for extra in EXTRA.get(name, []):
            yield name, extra


def _backends(spec: OptimizerSpec) -> list[str]:
    names = ["full_matrix"]
    if rules.get(spec.rule).gradient_multiple:
        names.append("torch")
    if kernel.supports(spec):
        names.append("kernel")
    return names


def _one_step(backend: str, ds: dict, spec: OptimizerSpec, train_u: bool) -> dict:
    d = ds["X"].shape[-1]
    common = dict(
        iterations=1, log_iterations=np.array([0, 1]), W_mm=np.eye(d)[None],
        u_mm=np.ones((1, d)) if train_u else None, train_u=train_u,
    )  # fmt: skip
    if backend == "torch":
        return loop.train(TorchStepper, torch_loop.problem_of([ds]), spec, **common)[1]
    stepper = KernelStepper if backend == "kernel" else FullMatrixStepper
    return loop.train(stepper, TokenProblem([ds]), spec, **common)[1]


def _oracle_step(ds, spec, train_u, gap, monkeypatch) -> dict:
    """The rule's first step on the full W with the oracle's gradient in place of ours."""

    def oracle_gradients(state, fwd):
        W, u = state.params["W"][0], state.params["u"][0]
        g = oracle(ds, "exponential", gap, W=W, u=u)
        grads = {"W": Block(np.array([g.log_norm_W]), None, g.left[None], state.basis)}
        if state.train_u:
            grads["u"] = Block(np.array([g.log_norm_u]), g.dir_u[None].copy())
        return grads

    with monkeypatch.context() as patch:
        patch.setattr(full_matrix.FullMatrixStepper, "gradients", oracle_gradients)
        return _one_step("full_matrix", ds, spec, train_u)


@pytest.mark.parametrize("train_u", [False, True], ids=["u fixed", "u trained"])
@pytest.mark.parametrize("gap", [5.0, 100.0, 700.0])
@pytest.mark.parametrize("name, extra", list(_specs()), ids=lambda v: str(v))
def test_every_rule_steps_as_with_the_oracle_gradient(name, extra, gap, train_u, monkeypatch):
    ds = saturated(gap, seed=2)
    g = oracle(ds, "exponential", gap)
    spec = OptimizerSpec(rule=name, **{**SPECS[name](g), **extra})
    want = _oracle_step(ds, spec, train_u, gap, monkeypatch)
    want_W = want["W"][0] - ds["W0"]
    check_W = not (name == "polyak" and train_u)
    if check_W:  # a step we can measure
        assert np.linalg.norm(want_W) > 1e-6 * np.linalg.norm(ds["W0"])
    for backend in _backends(spec):
        got = _one_step(backend, ds, spec, train_u)
        got_W = np.asarray(got["W"])[0] - ds["W0"]
        if check_W:
            assert_matches(got_W, want_W / np.linalg.norm(want_W), f"{backend} {name} W step")
        if train_u:
            got_u, want_u = np.asarray(got["u"])[0] - ds["u"], want["u"][0] - ds["u"]
            assert_matches(got_u, want_u / np.linalg.norm(want_u), f"{backend} {name} u step")
