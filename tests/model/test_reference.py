"""attnbias.model.reference, the paper's equations written plainly: its closed forms against
autograd, the package's stable forms and steps against it, and the W-SVM margins of the
package's solver measured by it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from cross_attention import as_self_attention, with_queries, without_queries

from attnbias.data import models
from attnbias.model import attention, gradients, reference
from attnbias.model.arrays import log_mean
from attnbias.model.losses import get_loss
from attnbias.optim.full_batch import Optimizer
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm import max_margin
from attnbias.training import torch_loop

DTYPE = torch.float64
LOSSES = list(reference.LOSSES)
KINDS = ["example1", "example1_nonorth", "dm_random_u"]
RTOL = 1e-10


def as_t(x) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x), dtype=DTYPE)


def _dataset(kind: str, seed: int) -> dict:
    """A small dataset with a random, moderate starting point W0 (and decoder u)."""
    rng = np.random.default_rng(200 + seed)
    if kind == "example1":
        ds = models.generate("example1", seed, dict(n=6, T=4, d=9))
    elif kind == "example1_nonorth":  # noise along u: unequal non-optimal scores
        ds = models.generate("example1", seed, dict(n=6, T=4, d=9, noise_orthogonal_to_u=False))
    elif kind == "dm_random_u":  # a decoder under which some gaps gamma_opt - gamma_t are < 0
        ds = models.generate("dm", seed, dict(n=6, T=4, d=9))
        ds["u"] = 2.0 * rng.standard_normal(9)
    else:
        raise ValueError(kind)
    ds["W0"] = 0.7 * rng.standard_normal((9, 9))
    return ds


def _problem(kind: str, seeds=(0, 1)):
    """The datasets, the package's batch of them, and moderate random coordinates A."""
    datasets = [_dataset(kind, seed) for seed in seeds]
    problem = attention.Problem.from_arrays(datasets)
    gen = torch.Generator().manual_seed(11 * len(seeds) + len(kind))
    A = 0.5 * torch.randn(problem.zero_coordinates().shape, generator=gen, dtype=DTYPE)
    return datasets, problem, A


def _tensors(ds: dict):
    return as_t(ds["X"]), as_t(ds["y"]), as_t(ds["u"])


def _close(got, want, rtol=RTOL):
    """Equal to `rtol` relative to the size of `want` (entries near 0 are not judged alone)."""
    torch.testing.assert_close(got, want, rtol=rtol, atol=rtol * float(want.abs().max()))


# ------------------------------------------------------ the reference against autograd


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("kind", KINDS)
def test_closed_form_gradients_equal_autograd_of_the_risk(kind, loss):
    for ds in (_dataset(kind, 0), _dataset(kind, 1)):
        X, y, u = _tensors(ds)
        W = as_t(ds["W0"]).requires_grad_(True)
        u = u.clone().requires_grad_(True)
        auto_W, auto_u = torch.autograd.grad(reference.risk(X, y, u, W, loss), (W, u))
        with torch.no_grad():
            assert auto_W.norm() > 1e-3 and auto_u.norm() > 1e-3  # a non-trivial point
            _close(reference.grad_W(X, y, u, W, loss), auto_W)
            _close(reference.grad_u(X, y, u, W, loss), auto_u)


def test_model_is_eq1_sample_by_sample():
    """f(X; W, u) = u^T X^T softmax(X W x_1), one sequence at a time, and the scores."""
    ds = _dataset("example1_nonorth", 0)
    X, y, u = _tensors(ds)
    W = as_t(ds["W0"])
    f = reference.model(X, W, u)
    for i in range(len(y)):
        s = torch.softmax(X[i] @ W @ X[i, 0], dim=0)
        assert f[i].item() == pytest.approx((u @ X[i].T @ s).item(), rel=1e-13)
    gamma = reference.scores(X, y, u)
    assert gamma[2, 1].item() == pytest.approx((y[2] * u @ X[2, 1]).item(), rel=1e-14)
    np.testing.assert_array_equal(reference.optimal_tokens(X, y, u).numpy(), ds["opt"])


# ------------------------------------------- the package's stable forms against the reference


@pytest.mark.parametrize("kind", KINDS)
def test_package_forward_matches_reference(kind):
    datasets, problem, A = _problem(kind)
    u = problem.u0
    scores = attention.token_scores(problem, u, check_order=kind != "dm_random_u")
    fwd = attention.forward(problem, A, scores)
    W = problem.W(A)
    for b, ds in enumerate(datasets):
        X, y, u_b = _tensors(ds)
        _close(scores.gamma[b], reference.scores(X, y, u_b))
        _close(fwd.attn[b], reference.softmax_attention(X, W[b]))
        _close(fwd.margin[b], y * reference.model(X, W[b], u_b))
        _close(fwd.x_bar[b], reference.attended_tokens(X, W[b]))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("kind", KINDS)
def test_package_gradients_match_reference(kind, loss):
    """gradients.w_gradient and u_gradient return exp(log_scale) * direction (in W's
    coordinates A: grad_W = exp(log_scale) * direction @ Q); both equal the closed forms."""
    datasets, problem, A = _problem(kind)
    u = problem.u0
    loss_fn = get_loss(loss)
    fwd = attention.forward(problem, A, attention.token_scores(problem, u, check_order=False))
    gW = gradients.w_gradient(problem, fwd, loss_fn)
    gu = gradients.u_gradient(problem, fwd, loss_fn)
    W = problem.W(A)
    for b, ds in enumerate(datasets):
        X, y, u_b = _tensors(ds)
        ref_W = reference.grad_W(X, y, u_b, W[b], loss)
        ref_u = reference.grad_u(X, y, u_b, W[b], loss)
        _close(math.exp(gW.log_scale[b]) * (gW.direction[b] @ problem.Q[b]), ref_W)
        _close(math.exp(gu.log_scale[b]) * gu.direction[b], ref_u)
        assert gW.log_norm[b].item() == pytest.approx(math.log(ref_W.norm()), abs=1e-10)
        assert gu.log_norm[b].item() == pytest.approx(math.log(ref_u.norm()), abs=1e-10)


@pytest.mark.parametrize("loss", LOSSES)
def test_package_excess_loss_matches_risk_minus_loss_star(loss):
    """Polyak's L - L*, formed in logs by the package, equals reference.risk - loss_star."""
    datasets, problem, A = _problem("example1")
    fwd = attention.forward(problem, A, attention.token_scores(problem, problem.u0))
    loss_fn = get_loss(loss)
    log_loss = log_mean(torch, loss_fn.log_value(fwd.margin))
    log_abs, sign = torch_loop.log_excess_loss(fwd, loss_fn, "opt", log_loss)
    W = problem.W(A)
    for b, ds in enumerate(datasets):
        X, y, u = _tensors(ds)
        opt = torch.as_tensor(ds["opt"])
        excess = reference.risk(X, y, u, W[b], loss) - reference.loss_star(X, y, u, opt, loss)
        assert excess.item() > 1e-3  # O(1): the plain subtraction is exact enough here
        assert sign[b].item() == 1.0
        assert math.exp(log_abs[b]) == pytest.approx(excess.item(), rel=1e-10)


def test_loss_star_is_approached_along_w_mm():
    """With a fixed decoder under Ass. 2, L(R W_mm) > L* and L(R W_mm) - L* -> 0 as R grows."""
    ds = models.generate("example1", 3, dict(n=8, T=4, d=40))
    X, y, u = _tensors(ds)
    opt = torch.as_tensor(ds["opt"])
    W_mm = as_t(max_margin.solve_w_svm(ds["X"], ds["opt"]).W)
    L_star = reference.loss_star(X, y, u, opt).item()
    excess = [reference.risk(X, y, u, R * W_mm).item() - L_star for R in (1.0, 4.0, 16.0)]
    assert excess[0] > excess[1] > excess[2] > 0
    assert excess[2] < 1e-5 * excess[0]


# ---------------------------------------------------- the package's steps against the reference


def _fixed_decoder_step(spec: OptimizerSpec, f_star="opt"):
    datasets, problem, A = _problem("example1", seeds=(4,))
    loss_fn = get_loss("exponential")
    fwd = attention.forward(problem, A, attention.token_scores(problem, problem.u0))
    grads = {"W": gradients.w_gradient(problem, fwd, loss_fn)}
    log_loss = log_mean(torch, loss_fn.log_value(fwd.margin))
    log_abs, sign = torch_loop.log_excess_loss(fwd, loss_fn, f_star, log_loss)
    params = {"W": A.clone()}
    Optimizer(spec).step(params, grads, torch.where(sign > 0, log_abs, -torch.inf))
    X, y, u = _tensors(datasets[0])
    W = problem.W(A)[0]
    return problem.W(params["W"])[0], W, reference.grad_W(X, y, u, W), (X, y, u, datasets[0])


def test_gd_and_ngd_steps_match_eq2():
    new, W, g, _ = _fixed_decoder_step(OptimizerSpec("gd", lr=0.7))
    _close(new, reference.gd_step(W, g, 0.7))
    new, W, g, _ = _fixed_decoder_step(OptimizerSpec("ngd", lr=0.1))
    _close(new, reference.ngd_step(W, g, 0.1))
    # a cap that binds makes NGD a GD step with step size `cap`
    new, W, g, _ = _fixed_decoder_step(OptimizerSpec("ngd", lr=0.1, max_step=1e-3))
    assert 0.1 / g.norm().item() > 1e-3
    _close(new, reference.gd_step(W, g, 1e-3))


@pytest.mark.parametrize("eta_max", [None, 1e-3])
def test_polyak_step_matches_sec2(eta_max):
    new, W, g, (X, y, u, ds) = _fixed_decoder_step(OptimizerSpec("polyak", eta_max=eta_max))
    excess = reference.risk(X, y, u, W) - reference.loss_star(X, y, u, torch.as_tensor(ds["opt"]))
    _close(new, reference.polyak_step(W, g, excess, eta_max))


@pytest.mark.parametrize("lr_u", [0.2, None])
@pytest.mark.parametrize("normalize", ["per_block", "global"])
def test_joint_ngd_steps_match_eq10(normalize, lr_u):
    """NGD of Fig. 3 (W and u each normalised) and joint NGD (one norm over (W, u)); u's
    own step, or lr where none is set (the reference states that fallback on its own)."""
    datasets, problem, A = _problem("dm_random_u", seeds=(5,))
    u = problem.u0.clone()
    loss_fn = get_loss("exponential")
    fwd = attention.forward(problem, A, attention.token_scores(problem, u, check_order=False))
    grads = {
        "W": gradients.w_gradient(problem, fwd, loss_fn),
        "u": gradients.u_gradient(problem, fwd, loss_fn),
    }
    params = {"W": A.clone(), "u": u.clone()}
    Optimizer(OptimizerSpec("ngd", lr=0.1, lr_u=lr_u, normalize=normalize)).step(params, grads)
    X, y, u_ref = _tensors(datasets[0])
    W = problem.W(A)[0]
    gW, gu = reference.grad_W(X, y, u_ref, W), reference.grad_u(X, y, u_ref, W)
    want_W, want_u = reference.joint_ngd_step(
        W, u_ref, gW, gu, 0.1, lr_u, per_block=normalize == "per_block"
    )
    _close(problem.W(params["W"])[0], want_W)
    _close(params["u"][0], want_u)


# ------------------------------------------------------------- the max-margin solutions


@pytest.mark.parametrize(
    ("model", "params"),
    [
        ("example1", dict(n=20, T=5, d=100)),
        ("example1", dict(n=6, T=4, d=12, noise_orthogonal_to_u=False)),
        ("dm", dict(n=10, T=3, d=40)),
        ("two_token", dict(d=2)),
        ("app_c1", dict(init_norm=0.5, direction=[[-1.0, -2.0], [3.0, 4.0]])),
    ],
)
def test_w_svm_margins_of_the_solver(model, params):
    """Every (W-SVM) margin of max_margin.solve_w_svm's W_mm, measured by the reference, is at least
    1, and exactly 1 on the support (the constraints with a non-zero dual variable)."""
    ds = models.generate(model, 0, params)
    solution = max_margin.solve_w_svm(ds["X"], ds["opt"])
    margins = reference.w_svm_constraints(
        as_t(ds["X"]), torch.as_tensor(ds["opt"]), as_t(solution.W)
    ).numpy()
    n, T, _ = ds["X"].shape
    assert margins.shape == (n, T - 1)
    assert margins.min() >= 1 - 1e-8
    dual = solution.dual.reshape(n, T - 1)  # svm's constraint order: i, then t != opt_i
    support = dual > 1e-9 * dual.max()
    assert support.sum() == solution.n_support >= 1
    np.testing.assert_allclose(margins[support], 1.0, rtol=0, atol=1e-8)
    # and the package's own margins agree with the reference's
    np.testing.assert_allclose(solution.margins, margins.reshape(-1), rtol=1e-10, atol=1e-12)


def test_two_token_w_mm_is_the_closed_form():
    """Sec. 3.3: W_mm = (x_1 - x_2) x_1^T / (||x_1 - x_2||^2 ||x_1||^2), both margins 1."""
    ds = models.generate("two_token", 0, dict(d=2))
    x1, x2 = ds["X"][0]
    closed = np.outer(x1 - x2, x1) / (np.sum((x1 - x2) ** 2) * np.sum(x1**2))
    np.testing.assert_allclose(max_margin.solve_w_svm(ds["X"], ds["opt"]).W, closed, atol=1e-12)
    margins = reference.w_svm_constraints(as_t(ds["X"]), torch.as_tensor(ds["opt"]), as_t(closed))
    np.testing.assert_allclose(margins.numpy(), 1.0, atol=1e-14)


def test_u_svm_margins_of_the_solver():
    ds = models.generate("dm", 1, dict(n=10, T=3, d=40))
    solution = max_margin.solve_u_svm(ds["X"], ds["y"], ds["opt"])
    margins = reference.u_svm_constraints(
        as_t(ds["X"]), as_t(ds["y"]), torch.as_tensor(ds["opt"]), as_t(solution.u)
    ).numpy()
    assert margins.min() >= 1 - 1e-8
    support = solution.dual > 1e-9 * solution.dual.max()
    np.testing.assert_allclose(margins[support], 1.0, rtol=0, atol=1e-8)


# ------------------------------------------------ cross-attention: the queries Z (model.queries)


def _cross(kind: str, seed: int) -> dict:
    """_dataset's instance with queries Z that are none of its tokens."""
    return with_queries(_dataset(kind, seed), seed)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("kind", KINDS)
def test_closed_form_gradients_with_queries_equal_autograd(kind, loss):
    """With Z, grad_W L = (1/n) sum_i l'(y_i f_i) y_i X_i^T (diag s_i - s_i s_i^T) X_i u z_i^T
    (and grad_u) equal torch autograd of the risk with Z; and they are not the gradients of
    self-attention on the same tokens (the control: Z is read)."""
    for ds in (_cross(kind, 0), _cross(kind, 1)):
        X, y, u = _tensors(ds)
        Z = as_t(ds["Z"])
        W = as_t(ds["W0"]).requires_grad_(True)
        u = u.clone().requires_grad_(True)
        auto_W, auto_u = torch.autograd.grad(reference.risk(X, y, u, W, loss, Z), (W, u))
        with torch.no_grad():
            assert auto_W.norm() > 1e-3 and auto_u.norm() > 1e-3
            _close(reference.grad_W(X, y, u, W, loss, Z), auto_W)
            _close(reference.grad_u(X, y, u, W, loss, Z), auto_u)
            self_W = reference.grad_W(X, y, u, W, loss)
            assert (self_W - auto_W).norm() > 1e-2 * auto_W.norm()


def test_the_model_with_queries_is_eq1_with_z_sample_by_sample():
    """f_i = u^T X_i^T softmax(X_i W z_i); with Z = X[:, 0] exactly self-attention."""
    ds = _cross("example1_nonorth", 0)
    X, y, u = _tensors(ds)
    W, Z = as_t(ds["W0"]), as_t(ds["Z"])
    f = reference.model(X, W, u, Z)
    for i in range(len(y)):
        s = torch.softmax(X[i] @ W @ Z[i], dim=0)
        assert f[i].item() == pytest.approx((u @ X[i].T @ s).item(), rel=1e-13)
    assert torch.equal(reference.model(X, W, u, X[:, 0, :]), reference.model(X, W, u))
    assert not torch.allclose(f, reference.model(X, W, u))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("kind", KINDS)
def test_package_forward_and_gradients_with_queries_match_the_reference(kind, loss):
    """attention.Problem reads Z: its forward pass and stable gradients equal the reference
    equations with Z, and its gradient equals autograd's; without Z they are self-attention's."""
    datasets = [_cross(kind, seed) for seed in (0, 1)]
    problem = attention.Problem.from_arrays(datasets)
    gen = torch.Generator().manual_seed(5)
    A = 0.5 * torch.randn(problem.zero_coordinates().shape, generator=gen, dtype=DTYPE)
    loss_fn = get_loss(loss)
    fwd = attention.forward(
        problem, A, attention.token_scores(problem, problem.u0, check_order=False)
    )
    gW = gradients.w_gradient(problem, fwd, loss_fn)
    W = problem.W(A)
    for b, ds in enumerate(datasets):
        X, y, u_b = _tensors(ds)
        Z = as_t(ds["Z"])
        _close(problem.Q[b], Z)
        _close(fwd.attn[b], reference.softmax_attention(X, W[b], Z))
        _close(fwd.margin[b], y * reference.model(X, W[b], u_b, Z))
        _close(fwd.x_bar[b], reference.attended_tokens(X, W[b], Z))
        W_b = W[b].clone().requires_grad_(True)
        (auto_W,) = torch.autograd.grad(reference.risk(X, y, u_b, W_b, loss, Z), (W_b,))
        _close(math.exp(gW.log_scale[b]) * (gW.direction[b] @ problem.Q[b]), auto_W)
        _close(auto_W, reference.grad_W(X, y, u_b, W[b], loss, Z))
    # the control: the same tokens without Z are another problem
    plain = attention.Problem.from_arrays([without_queries(ds) for ds in datasets])
    fwd_plain = attention.forward(
        plain, A, attention.token_scores(plain, plain.u0, check_order=False)
    )
    assert not torch.allclose(fwd_plain.attn, fwd.attn)


def test_z_equal_to_the_first_tokens_is_self_attention():
    """Z = X[:, 0] written out gives self-attention's gradient to rounding (not bit for bit:
    the copy's memory layout changes the products' summation order; data without Z take the
    first tokens as views of X, as before Z existed)."""
    datasets = [_dataset("dm_random_u", seed) for seed in (0, 1)]
    plain = attention.Problem.from_arrays(datasets)
    written = attention.Problem.from_arrays([as_self_attention(ds) for ds in datasets])
    A = 0.3 * torch.ones(plain.zero_coordinates().shape, dtype=DTYPE)
    loss = get_loss("logistic")
    grads = []
    for problem in (plain, written):
        fwd = attention.forward(
            problem, A, attention.token_scores(problem, problem.u0, check_order=False)
        )
        grads.append(gradients.w_gradient(problem, fwd, loss).direction @ problem.Q)
    _close(grads[1], grads[0], rtol=1e-13)


def test_w_svm_with_queries_meets_the_reference_constraints():
    """The package's W_mm of a cross-attention dataset: every reference margin
    (x_opt - x_t)^T W z_i >= 1, the support's = 1; the self-attention margins of the same
    W are not (the control: the SVM read Z)."""
    ds = _cross("example1", 0)
    solution = max_margin.solve_for_dataset(ds, False, "test")["W_mm"]
    X, opt, Z, W = as_t(ds["X"]), torch.as_tensor(ds["opt"]), as_t(ds["Z"]), as_t(solution.W)
    margins = reference.w_svm_constraints(X, opt, W, Z)
    assert margins.min() >= 1 - 1e-8
    support = solution.dual.reshape(margins.shape) > 1e-9 * solution.dual.max()
    np.testing.assert_allclose(margins.numpy()[support], 1.0, rtol=0, atol=1e-8)
    np.testing.assert_allclose(solution.margins, margins.reshape(-1), rtol=1e-10, atol=1e-12)
    assert abs(reference.w_svm_constraints(X, opt, W).min() - 1.0) > 1e-3
