"""training.loop on every stepper (the C kernel, numpy on the full W, torch): the refusals,
the nonfinite modes, the rule's start check and the crossings are the loop's, so each
behaves the same whichever stepper computes the steps.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnbias.data import models
from attnbias.model import attention
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm import max_margin
from attnbias.training import loop, metrics
from attnbias.training.full_matrix import FullMatrixStepper
from attnbias.training.kernel import KernelStepper
from attnbias.training.token_problem import TokenProblem
from attnbias.training.torch_loop import TorchStepper
from attnbias.workflow.train_job import train_seeds


def test_non_finite_step_is_not_repaired():
    """A NaN step used to become no step (nan_to_num): now the run stops at the next log."""
    ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
    W_mm = torch.as_tensor(max_margin.solve_w_svm(ds["X"], ds["opt"]).W[None])
    with pytest.raises(metrics.NonFiniteError, match="parameter W not finite at iteration 2"):
        loop.train(
            TorchStepper,
            attention.Problem.from_arrays([ds]),
            OptimizerSpec("gd", lr=math.nan),
            iterations=3,
            log_iterations=np.array([0, 2, 3]),
            W_mm=W_mm,
        )


def test_zero_gradient_block_takes_no_step():
    """u = 0 at the start of joint training: W's gradient is zero, and W stays put."""
    ds = models.generate("dm", 0, dict(n=6, T=3, d=8))
    solutions = max_margin.solve_for_dataset(ds, True, "dm")
    problem = attention.Problem.from_arrays([ds])
    table, final = loop.train(
        TorchStepper,
        problem,
        OptimizerSpec("ngd", lr=0.1),
        iterations=1,
        log_iterations=np.array([0, 1]),
        W_mm=torch.as_tensor(solutions["W_mm"].W[None]),
        u_mm=torch.as_tensor(solutions["u_mm"].u[None]),
        train_u=True,
    )
    assert np.all(final["W"] == 0) and np.all(np.isfinite(final["u"]))


def test_polyak_never_firing_is_refused_in_train():
    ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
    W_mm = torch.as_tensor(max_margin.solve_w_svm(ds["X"], ds["opt"]).W[None])
    with pytest.raises(ValueError, match="f_star=5 never steps"):
        loop.train(
            TorchStepper,
            attention.Problem.from_arrays([ds]),
            OptimizerSpec("polyak", f_star=5.0),
            iterations=2,
            log_iterations=np.array([0, 2]),
            W_mm=W_mm,
        )


def _torch_stepper():
    pytest.importorskip("torch")
    from attnbias.training import torch_loop

    return torch_loop.TorchStepper, torch_loop.problem_of


STEPPERS = {
    "kernel": lambda: (KernelStepper, lambda dss: TokenProblem(dss)),
    "full": lambda: (FullMatrixStepper, lambda dss: TokenProblem(dss)),
    "torch": _torch_stepper,
}


def _runs(poisoned: int | None = None):
    dss = [models.generate("example1", seed, dict(n=6, T=4, d=10)) for seed in range(3)]
    W_mm = np.stack([max_margin.solve_w_svm(ds["X"], ds["opt"]).W for ds in dss])
    if poisoned is not None:
        dss[poisoned] = {**dss[poisoned], "X": dss[poisoned]["X"].copy()}
        dss[poisoned]["X"][2, 1, 3] = np.nan
    return dss, W_mm


def _train(name, dss, W_mm, spec=None, iterations=50, **kw):
    stepper, problem = STEPPERS[name]()
    spec = spec or OptimizerSpec("ngd", lr=0.1)
    grid = metrics.log_grid(iterations, 6)
    return loop.train(
        stepper, problem(dss), spec, iterations=iterations, log_iterations=grid, W_mm=W_mm, **kw
    )


@pytest.mark.parametrize("name", list(STEPPERS))
def test_the_refusals_are_the_loops(name):
    dss, W_mm = _runs()
    with pytest.raises(ValueError, match="u_mm"):
        _train(name, dss, W_mm, train_u=True)
    with pytest.raises(ValueError, match=r"f\*"):
        _train(name, dss, W_mm, OptimizerSpec("polyak"), u_mm=np.ones((1, 10)), train_u=True)
    with pytest.raises(ValueError, match="loss"):
        _train(name, dss, W_mm, loss="square")
    with pytest.raises(ValueError, match="nonfinite"):
        _train(name, dss, W_mm, nonfinite="skip")


@pytest.mark.parametrize("name", list(STEPPERS))
def test_a_diverged_run_raises_naming_it_or_gets_nan(name):
    dss, W_mm = _runs(poisoned=1)
    labels = ["seed 10", "seed 11", "seed 12"]
    with pytest.raises(metrics.NonFiniteError, match="^seed 11: training diverged: metric"):
        _train(name, dss, W_mm, labels=labels)
    table, final = _train(name, dss, W_mm, nonfinite="nan")
    clean, clean_final = _train(name, *_runs(), nonfinite="nan")
    for values, reference in ((table, clean), (final, clean_final)):
        for key in reference:
            assert np.isnan(values[key][1]).all(), key
            kept = [0, 2]
            np.testing.assert_allclose(values[key][kept], reference[key][kept], rtol=1e-12)


@pytest.mark.parametrize("name", list(STEPPERS))
def test_the_rules_start_check_names_the_first_run_it_refuses(name):
    dss, W_mm = _runs()
    spec = OptimizerSpec("polyak", f_star=5.0)
    with pytest.raises(ValueError, match="^run b: Polyak step with f_star=5 never steps"):
        _train(name, dss, W_mm, spec, labels=["run b", "run c", "run d"])
    control = OptimizerSpec("polyak", f_star=0.0, eta_max=1.0)
    table, _ = _train(name, dss, W_mm, control)
    assert np.isfinite(table["log_loss"]).all()


def test_every_stepper_records_the_same_crossings():
    dss, W_mm = _runs()
    got = {
        name: _train(name, dss, W_mm, OptimizerSpec("ngd", lr=1.0), iterations=2000)[0]
        for name in ("kernel", "full")
    }
    for threshold in metrics.CROSSING_METRICS:
        first = got["kernel"][threshold]
        assert np.isfinite(first).all(), threshold
        np.testing.assert_array_equal(first, got["full"][threshold])


def test_the_jobs_batch_names_the_seed_that_fails():
    """The training job trains its seeds in one batch and names the one that diverges (no
    seed-by-seed retry)."""
    dss, W_mm = _runs(poisoned=2)
    config = dict(iterations=10, log_points=4, grid="log", loss="exponential", train_u=False)
    svms = [{"W_mm": W} for W in W_mm]
    labels = [f"experiment e, optimizer ngd, seed {s}" for s in range(3)]
    message = "^experiment e, optimizer ngd, seed 2: training diverged"
    with pytest.raises(metrics.NonFiniteError, match=message):
        train_seeds(dss, svms, config, OptimizerSpec("ngd", lr=0.1), labels=labels)


LARGEST_STEP_SPECS = [
    OptimizerSpec("ngd", lr=0.1),
    OptimizerSpec("ngd", lr=0.1, momentum=0.9, max_step=1e3),
    OptimizerSpec("polyak"),
    OptimizerSpec("gd", lr=1.0),
]


@pytest.mark.parametrize("spec", LARGEST_STEP_SPECS, ids=lambda s: s.caption())
@pytest.mark.parametrize("name", list(STEPPERS))
def test_the_largest_step_is_over_every_step_not_the_logged_ones(name, spec):
    """max_log_step_W at a logged t is the largest log step over every step before t, as a
    run logged at every step gives it by brute force; the last row holds the whole run's.
    Control: the logged steps of the sparse run (log_step_W) miss the run's largest step,
    which NGD and PS take after the last logged step that has one."""
    dss, W_mm = _runs()
    stepper, problem = STEPPERS[name]()
    iterations, sparse_grid = 300, np.array([0, 5, 40, 250, 300])

    def run(grid):
        return loop.train(stepper, problem(dss), spec, iterations=iterations,
                          log_iterations=grid, W_mm=W_mm)[0]  # fmt: skip

    dense, sparse = run(np.arange(iterations + 1)), run(sparse_grid)
    every_step = dense["log_step_W"][:, :-1]  # the step at t = 0 .. 299
    assert np.isnan(sparse["max_log_step_W"][:, 0]).all()  # no step before t = 0
    for j, t in enumerate(sparse_grid[1:], start=1):
        expected = every_step[:, :t].max(axis=1)
        np.testing.assert_allclose(sparse["max_log_step_W"][:, j], expected, rtol=1e-12)
    np.testing.assert_array_equal(dense["max_log_step_W"][:, -1], sparse["max_log_step_W"][:, -1])
    logged_only = np.nanmax(sparse["log_step_W"], axis=1)
    if spec.rule == "gd":  # a constant step: nothing to miss
        np.testing.assert_allclose(logged_only, sparse["max_log_step_W"][:, -1], rtol=1e-12)
    elif spec.max_step is not None:  # the cap binds by t = 250: the largest step is the cap
        np.testing.assert_allclose(sparse["max_log_step_W"][:, -1], math.log(spec.max_step))
    else:
        assert np.all(logged_only < sparse["max_log_step_W"][:, -1] - 0.1)


def test_a_direction_rule_has_no_largest_step():
    dss, W_mm = _runs()
    table, _ = _train("full", dss, W_mm, OptimizerSpec("sign", lr=0.01))
    assert np.isnan(table["max_log_step_W"]).all()
