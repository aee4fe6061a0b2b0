"""The compiled C kernel (training.kernel) against the torch reference (training.torch_loop).

Every optimizer variant, both losses, the fixed decoder and joint training, the metrics
(log_step_W, per-sample softmax, exact crossings), the divergence checks, and the NGD
direction far past float resolution (t = 1e4) agree with torch_loop.train to 1e-10 relative.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from backend_runs import DM, FIG8, assert_tables_agree, svm_solutions
from cross_attention import cross_instance, without_queries

from attnbias.data import models
from attnbias.model import attention, gradients, reference
from attnbias.model.losses import get_loss
from attnbias.optim.spec import OptimizerSpec
from attnbias.studies import global_convergence
from attnbias.svm import max_margin
from attnbias.training import dispatch, kernel, kernel_library, loop
from attnbias.training.full_matrix import FullMatrixStepper
from attnbias.training.kernel import KernelStepper
from attnbias.training.metrics import CROSSING_METRICS, log_grid, logged_metrics
from attnbias.training.token_problem import TokenProblem
from attnbias.training.torch_loop import TorchStepper

E1 = dict(n=20, T=5, d=100, opt_signal=1.0, query_signal=0.5, noise_orthogonal_to_u=True)
E1_SMALL = dict(n=8, T=4, d=30, query_signal=0.5)


def _both(
    datasets, spec, *, iterations, train_u=False, loss="exponential", points=30, may_diverge=False
):
    """(reference table, fast table, reference final, fast final) on the same grid; None
    where `may_diverge` and both diverge at the same iteration with the same message (the
    uncapped Polyak step aiming at f* = 0 below a fixed decoder's L*: agreeing there is what
    is checked)."""
    W_mm, u_mm = svm_solutions(datasets, train_u)
    grid = log_grid(iterations, points)
    fast = dict(iterations=iterations, log_iterations=grid, W_mm=W_mm, u_mm=u_mm,
                train_u=train_u, loss=loss)  # fmt: skip
    try:
        # (the torch stepper takes the numpy references onto its device)
        ref, ref_final = loop.train(
            TorchStepper, attention.Problem.from_arrays(datasets), spec, **fast
        )
    except FloatingPointError as err:  # then the fast path diverges at the same iteration
        if not may_diverge:
            raise
        with pytest.raises(FloatingPointError, match=re.escape(str(err))):
            loop.train(KernelStepper, TokenProblem(datasets), spec, **fast)
        return None
    got, got_final = loop.train(KernelStepper, TokenProblem(datasets), spec, **fast)
    return ref, got, ref_final, got_final


FIXED = [
    OptimizerSpec("gd", lr=1.0),
    OptimizerSpec("ngd", lr=0.1),
    OptimizerSpec("ngd", lr=0.1, max_step=3.0),
    OptimizerSpec("ngd", lr=0.1, momentum=0.9),
    OptimizerSpec("polyak"),
    OptimizerSpec("polyak", eta_max=5.0),
    OptimizerSpec("polyak", f_star=0),
    OptimizerSpec("polyak", f_star=1e-3, eta_max=50.0),
]


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("spec", FIXED, ids=lambda s: s.caption())
def test_fixed_decoder_matches_the_reference(spec, loss):
    datasets = [models.generate("example1", seed, E1_SMALL) for seed in (0, 1)]
    both = _both(datasets, spec, iterations=400, loss=loss, may_diverge=True)
    if both is None:  # both diverged alike, which _both checked
        assert spec == OptimizerSpec("polyak", f_star=0)  # aims below L* > 0, uncapped
        return
    ref, got, ref_final, got_final = both
    assert_tables_agree(ref, got)
    np.testing.assert_allclose(got_final["W"], ref_final["W"], rtol=1e-10, atol=1e-12)


JOINT = [
    OptimizerSpec("gd", lr=1.0),
    OptimizerSpec("ngd", lr=0.1),
    OptimizerSpec("ngd", lr=0.1, normalize="per_block"),
    OptimizerSpec("ngd", lr=0.1, normalize="per_block", max_step=2.0, lr_u=0.05),
    OptimizerSpec("ngd", lr=0.1, momentum=0.5),
    OptimizerSpec("polyak", f_star=0),
    OptimizerSpec("polyak", f_star=0, eta_max=10.0),
    EQ10 := OptimizerSpec("ngd", lr=0.1, normalize="per_block", decay_W=1.0, decay_u=0.5),
    OptimizerSpec("gd", lr=1.0, decay_W=0.5, decay_u=0.25),
]


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("spec", JOINT, ids=lambda s: s.caption())
def test_joint_training_matches_the_reference(spec, loss):
    datasets = [models.generate("dm", seed, DM) for seed in (0, 1)]
    ref, got, ref_final, got_final = _both(datasets, spec, iterations=400, train_u=True, loss=loss)
    assert_tables_agree(ref, got)
    for key in ("W", "u"):
        np.testing.assert_allclose(got_final[key], ref_final[key], rtol=1e-10, atol=1e-12)


def test_eq10_step_factors_fire_in_both_backends():
    """Negative control for the Eq. 10 rows above: the factors change the run (a kernel
    that ignored decay_W would agree with a reference that ignored it too)."""
    datasets = [models.generate("dm", 0, DM)]
    plain = OptimizerSpec("ngd", lr=0.1, normalize="per_block")
    (plain_ref, plain_fast, *_), (eq10_ref, eq10_fast, *_) = (
        _both(datasets, s, iterations=200, train_u=True) for s in (plain, EQ10)
    )
    # step t moves W by lr (t + 1)^-1: ||W_200|| <= lr H_200 (about 0.59), not lr 200
    bound = 0.1 * sum(1 / (t + 1) for t in range(200))
    for plain_run, eq10_run in ((plain_ref, eq10_ref), (plain_fast, eq10_fast)):
        assert np.all(eq10_run["W_norm"][..., -1] <= bound + 1e-12)
        assert np.all(plain_run["W_norm"][..., -1] > 5 * bound)


def test_bad_init_per_sample_softmax_and_crossings_match():
    """fig8's setting: W0 != 0, n = 4 (per-sample softmax), GD crossing both thresholds."""
    datasets = [models.generate("bad_direction", seed, FIG8) for seed in (0, 1)]
    ref, got, _, _ = _both(datasets, OptimizerSpec("ngd", lr=0.1), iterations=3000)
    assert "opt_softmax_3" in got
    assert np.isfinite(got["first_gap_W_below_0.001"]).all()  # crossed, at the same step
    assert_tables_agree(ref, got)


def test_opt_not_the_best_token_matches():
    """Signed sums (delta and L - L* of both signs): a fixed u whose opt is not the argmax."""
    ds = models.generate("example1", 1, dict(n=6, T=4, d=10, noise_orthogonal_to_u=False))
    ds["W0"] = np.random.default_rng(51).standard_normal((10, 10))
    gamma = models.token_scores(ds["X"], ds["y"], ds["u"])
    ds["opt"] = ds["opt"].copy()
    ds["opt"][:2] = np.argsort(gamma[:2], axis=1)[:, -2]
    # (Polyak stops near t = 60 here, where L - L* ~ 1e-17 L is rounding noise of either sign)
    for spec, iterations in ((OptimizerSpec("gd"), 200), (OptimizerSpec("ngd", lr=0.1), 200),
                             (OptimizerSpec("polyak", eta_max=1.0), 40)):  # fmt: skip
        ref, got, _, _ = _both([ds], spec, iterations=iterations)
        assert_tables_agree(ref, got)


def test_two_token_example_matches():
    ds = models.generate("two_token", 0, dict(d=2))
    for spec in (OptimizerSpec("gd"), OptimizerSpec("ngd", lr=0.1)):
        ref, got, _, _ = _both([ds], spec, iterations=3000)
        assert_tables_agree(ref, got)


def _ngd_direction_reference(ds, W):
    """The reference's NGD direction G / ||G|| at W (gradients.w_gradient, in W space)."""
    problem = attention.Problem.from_arrays([{**ds, "W0": W}])
    scores = attention.token_scores(problem, problem.u0)
    fwd = attention.forward(problem, problem.zero_coordinates(), scores)
    G = (gradients.w_gradient(problem, fwd, get_loss("exponential")).direction @ problem.Q)[0]
    return (G / torch.linalg.vector_norm(G)).numpy()


@pytest.mark.slow
def test_ngd_direction_at_t_1e4_matches_the_reference():
    """fig2's size, 1e4 NGD steps: the attention off opt is ~e^-1000, the loss ~e^-1e3.

    The fast path's direction at t = 1e4 is its own step, (W_t - W_{t+1}) / lr; the
    reference's is gradients.w_gradient at its own W_t. They agree to 1e-10 relative.
    """
    ds = models.generate("example1", 0, E1)
    W_mm, _ = svm_solutions([ds], False)
    spec, t = OptimizerSpec("ngd", lr=0.1), 10_000
    ref, ref_final = loop.train(
        TorchStepper,
        attention.Problem.from_arrays([ds]),
        spec,
        iterations=t,
        log_iterations=np.array([0, t]),
        W_mm=torch.as_tensor(W_mm),
    )
    assert ref["log1m_opt_softmax"][0, -1] < -200  # far past float resolution
    problem = TokenProblem([ds])
    _, final = loop.train(
        KernelStepper, problem, spec, iterations=t, log_iterations=[0, t], W_mm=W_mm
    )
    _, after = loop.train(
        KernelStepper, problem, spec, iterations=t + 1, log_iterations=[0, t + 1], W_mm=W_mm
    )
    direction = (final["W"][0] - after["W"][0]) / spec.lr
    expected = _ngd_direction_reference(ds, ref_final["W"][0])
    assert np.linalg.norm(direction - expected) / np.linalg.norm(expected) < 1e-10
    np.testing.assert_allclose(final["W"][0], ref_final["W"][0], rtol=1e-10, atol=1e-9)


def test_divergence_raises_as_in_the_reference():
    ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
    W_mm, _ = svm_solutions([ds], False)
    problem = TokenProblem([ds])
    for grid, at in ((np.arange(4), "iteration 1"), (np.array([0, 3]), "iteration 3")):
        with pytest.raises(FloatingPointError, match=at):
            loop.train(
                KernelStepper,
                problem,
                OptimizerSpec("gd", lr=math.inf),
                iterations=3,
                log_iterations=grid,
                W_mm=W_mm,
            )
    ds["X"][2, 1, 3] = np.nan
    with pytest.raises(FloatingPointError, match="iteration 0"):
        loop.train(KernelStepper, TokenProblem([ds]), OptimizerSpec("ngd", lr=0.1), iterations=2,
            log_iterations=np.arange(3), W_mm=W_mm,
        )  # fmt: skip


def test_a_batch_shares_its_shapes():
    """(The refusals of a training request are the loop's: tests/training/test_loop.py.)"""
    ds = models.generate("dm", 0, dict(n=6, T=4, d=10))
    with pytest.raises(ValueError, match="share"):
        TokenProblem([ds, models.generate("dm", 1, dict(n=6, T=4, d=11))])


@pytest.mark.parametrize(
    ("model", "params", "train_u"), [("bad_direction", FIG8, False), ("dm", DM, True)]
)
def test_both_backends_log_the_shared_metric_names(model, params, train_u):
    """Both tables hold metrics.logged_metrics, in its order, then the crossings: the names
    the dispatcher gives a diverged torch run."""
    datasets = [models.generate(model, seed, params) for seed in (0, 1)]
    ref, got, *_ = _both(datasets, OptimizerSpec("ngd", lr=0.1), iterations=20, train_u=train_u)
    expected = [*logged_metrics(params["n"], train_u), *CROSSING_METRICS]
    assert list(ref) == expected and list(got) == expected
    per_sample = [name for name in expected if name.startswith("opt_softmax_")]
    assert len(per_sample) == (params["n"] if params["n"] <= 4 else 0)


def test_study_batch_matches_the_torch_backend():
    """The study's batched runs (one dataset, many W0 of several scales) on both backends."""
    ds = models.perturbed_example1(np.random.default_rng(0), n=6, T=4, d=20, correlation=1.0)
    W0s, _ = global_convergence.random_initialisations(np.random.default_rng(1), 20, 6, [1.0, 4.0])
    W_mm = max_margin.solve_w_svm(ds["X"], ds["opt"]).W
    grid = log_grid(300, 20)
    spec = OptimizerSpec("polyak")
    got, got_final, record = dispatch.train(
        [ds], spec, W0s=W0s, W_mm=W_mm[None], iterations=300, log_iterations=grid
    )
    assert record["backend"] == "c"
    problem = attention.Problem.from_arrays([{**ds, "W0": W0} for W0 in W0s])
    ref, ref_final = loop.train(
        TorchStepper,
        problem,
        spec,
        iterations=300,
        log_iterations=grid,
        W_mm=torch.as_tensor(W_mm[None]),
    )
    assert_tables_agree(ref, got)
    np.testing.assert_allclose(got_final["W"], ref_final["W"], rtol=1e-10, atol=1e-12)


def test_the_kernel_supports_every_rule_it_implements():
    for spec in (*FIXED, *JOINT):
        assert kernel.supports(spec), spec.caption()
        assert dispatch.backend("cpu", "float64", spec) == "c"


def test_editing_the_kernel_reruns_training():
    """The training rule's code inputs (codedeps.module_files) include the C source."""
    from attnbias.workflow.codedeps import module_files

    files = module_files(str(Path(__file__).resolve().parents[2] / "workflow/scripts/train.py"))
    assert str(kernel_library.KERNEL_SOURCE) in files


# ------------------------------------------------ cross-attention: the queries Z (model.queries)


@pytest.mark.parametrize("train_u", [False, True])
@pytest.mark.parametrize(
    "spec", [OptimizerSpec("gd", lr=1.0), OptimizerSpec("ngd", lr=0.1)], ids=["gd", "ngd"]
)
def test_the_kernel_reads_the_queries_as_numpy_and_torch_do(spec, train_u):
    """On a cross-attention instance (Z none of the tokens) the compiled kernel, the full-W
    numpy path and the torch stepper give one table to 1e-10; the same tokens without Z
    give another (the control: all three read Z)."""
    model, params = ("dm", DM) if train_u else ("example1", E1_SMALL)
    datasets = [cross_instance(seed, params, model) for seed in (0, 1)]
    W_mm, u_mm = svm_solutions(datasets, train_u)
    kw = dict(iterations=300, log_iterations=log_grid(300, 12), W_mm=W_mm, u_mm=u_mm,
              train_u=train_u, loss="logistic")  # fmt: skip
    ref, ref_final = loop.train(TorchStepper, attention.Problem.from_arrays(datasets), spec, **kw)
    got, got_final = loop.train(KernelStepper, TokenProblem(datasets), spec, **kw)
    full, full_final = loop.train(FullMatrixStepper, TokenProblem(datasets), spec, **kw)
    assert_tables_agree(ref, got)
    assert_tables_agree(ref, full)
    for name in ref_final:
        np.testing.assert_allclose(got_final[name], ref_final[name], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(full_final[name], ref_final[name], rtol=1e-10, atol=1e-12)
    plain = [without_queries(ds) for ds in datasets]
    _, plain_final = loop.train(KernelStepper, TokenProblem(plain), spec, **kw)
    assert not np.allclose(plain_final["W"], got_final["W"], rtol=1e-3)


def test_the_kernel_with_queries_takes_eq2s_steps_with_z():
    """GD on a cross-attention instance: the kernel's W after 40 steps equals 40 steps of
    Eq. (2) with the reference's closed-form gradient with Z (model.reference)."""
    ds = cross_instance(3, E1_SMALL)
    ds["W0"] = 0.3 * np.random.default_rng(7).standard_normal(ds["W0"].shape)
    W_mm, _ = svm_solutions([ds], False)
    spec, steps = OptimizerSpec("gd", lr=0.5), 40
    grid = log_grid(steps, 3)
    _, final = loop.train(
        KernelStepper, TokenProblem([ds]), spec, iterations=steps, log_iterations=grid,
        W_mm=W_mm, loss="logistic",
    )  # fmt: skip
    X, y, u, Z = (torch.as_tensor(ds[k], dtype=torch.float64) for k in ("X", "y", "u", "Z"))
    W = torch.as_tensor(ds["W0"], dtype=torch.float64)
    for _ in range(steps):
        W = reference.gd_step(W, reference.grad_W(X, y, u, W, "logistic", Z), spec.lr)
    np.testing.assert_allclose(final["W"][0], W.numpy(), rtol=1e-10, atol=1e-12)
    W_self = torch.as_tensor(ds["W0"], dtype=torch.float64)
    for _ in range(steps):  # the control: self-attention's steps end elsewhere
        W_self = reference.gd_step(W_self, reference.grad_W(X, y, u, W_self, "logistic"), 0.5)
    assert not np.allclose(final["W"][0], W_self.numpy(), rtol=1e-3)
