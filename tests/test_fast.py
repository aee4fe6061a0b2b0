"""The compiled CPU path (training.kernel) against the torch reference (training.torch_loop).

Every optimizer variant, both losses, the fixed decoder and joint training, the metrics
(log_step_W, per-sample softmax, exact crossings), the divergence checks, and the NGD
direction far past float resolution (t = 1e4) agree with torch_loop.train to 1e-10 relative.
"""

from __future__ import annotations

import dataclasses
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from attnbias.data import models
from attnbias.model import attention, gradients
from attnbias.model.losses import get_loss
from attnbias.optim.full_batch import OptimizerSpec
from attnbias.studies import global_convergence
from attnbias.svm import max_margin
from attnbias.training import dispatch, kernel, kernel_library, torch_loop
from attnbias.training.metrics import CROSSING_METRICS, log_grid, logged_metrics
from attnbias.training.token_problem import TokenProblem

E1 = dict(n=20, T=5, d=100, opt_signal=1.0, query_signal=0.5, noise_orthogonal_to_u=True)
E1_SMALL = dict(n=8, T=4, d=30, query_signal=0.5)
DM = dict(n=8, T=4, d=30, mu_norm=1.0, noise_scale=0.5)
FIG8 = dict(n=4, T=3, d=20, opt_signal=1.0, query_signal=0.5, init_norm=2.0)


def _solutions(datasets, train_u):
    arrays = [
        max_margin.to_arrays(max_margin.solve_for_dataset(ds, train_u, "test")) for ds in datasets
    ]
    W_mm = np.stack([a["W_mm"] for a in arrays])
    u_mm = np.stack([a["u_mm"] for a in arrays]) if train_u else None
    return W_mm, u_mm


def _both(
    datasets, spec, *, iterations, train_u=False, loss="exponential", points=30, may_diverge=False
):
    """(reference table, fast table, reference final, fast final) on the same grid; None
    where `may_diverge` and both diverge at the same iteration with the same message (the
    uncapped Polyak step aiming at f* = 0 below a fixed decoder's L*: agreeing there is what
    is checked)."""
    W_mm, u_mm = _solutions(datasets, train_u)
    grid = log_grid(iterations, points)
    try:
        ref, ref_final = torch_loop.train(
            attention.Problem.from_arrays(datasets),
            spec,
            iterations=iterations,
            log_iterations=grid,
            W_mm=torch.as_tensor(W_mm),
            u_mm=None if u_mm is None else torch.as_tensor(u_mm),
            train_u=train_u,
            loss=loss,
        )
    except FloatingPointError as err:  # then the fast path diverges at the same iteration
        if not may_diverge:
            raise
        with pytest.raises(FloatingPointError, match=re.escape(str(err))):
            kernel.train(
                TokenProblem(datasets), spec, iterations=iterations, log_iterations=grid,
                W_mm=W_mm, u_mm=u_mm, train_u=train_u, loss=loss,
            )  # fmt: skip
        return None
    got, got_final = kernel.train(
        TokenProblem(datasets),
        spec,
        iterations=iterations,
        log_iterations=grid,
        W_mm=W_mm,
        u_mm=u_mm,
        train_u=train_u,
        loss=loss,
    )
    return ref, got, {k: v.numpy() for k, v in ref_final.items()}, got_final


def _assert_tables_agree(ref, got, rel=1e-10):
    assert set(got) == set(ref)
    for name in ref:
        assert got[name].shape == ref[name].shape, name
        np.testing.assert_array_equal(np.isnan(got[name]), np.isnan(ref[name]), err_msg=name)
        finite = ~np.isnan(ref[name])
        np.testing.assert_allclose(got[name][finite], ref[name][finite], rtol=rel, err_msg=name)


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
    _assert_tables_agree(ref, got)
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
    _assert_tables_agree(ref, got)
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
    _assert_tables_agree(ref, got)


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
        _assert_tables_agree(ref, got)


def test_two_token_example_matches():
    ds = models.generate("two_token", 0, dict(d=2))
    for spec in (OptimizerSpec("gd"), OptimizerSpec("ngd", lr=0.1)):
        ref, got, _, _ = _both([ds], spec, iterations=3000)
        _assert_tables_agree(ref, got)


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
    W_mm, _ = _solutions([ds], False)
    spec, t = OptimizerSpec("ngd", lr=0.1), 10_000
    ref, ref_final = torch_loop.train(
        attention.Problem.from_arrays([ds]),
        spec,
        iterations=t,
        log_iterations=np.array([0, t]),
        W_mm=torch.as_tensor(W_mm),
    )
    assert ref["log1m_opt_softmax"][0, -1] < -200  # far past float resolution
    problem = TokenProblem([ds])
    _, final = kernel.train(problem, spec, iterations=t, log_iterations=[0, t], W_mm=W_mm)
    _, after = kernel.train(problem, spec, iterations=t + 1, log_iterations=[0, t + 1], W_mm=W_mm)
    direction = (final["W"][0] - after["W"][0]) / spec.lr
    expected = _ngd_direction_reference(ds, ref_final["W"][0].numpy())
    assert np.linalg.norm(direction - expected) / np.linalg.norm(expected) < 1e-10
    np.testing.assert_allclose(final["W"][0], ref_final["W"][0].numpy(), rtol=1e-10, atol=1e-9)


def test_divergence_raises_as_in_the_reference():
    ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
    W_mm, _ = _solutions([ds], False)
    problem = TokenProblem([ds])
    for grid, at in ((np.arange(4), "iteration 1"), (np.array([0, 3]), "iteration 3")):
        with pytest.raises(FloatingPointError, match=at):
            kernel.train(
                problem, OptimizerSpec("gd", lr=math.inf), iterations=3, log_iterations=grid,
                W_mm=W_mm,
            )  # fmt: skip
    ds["X"][2, 1, 3] = np.nan
    with pytest.raises(FloatingPointError, match="iteration 0"):
        kernel.train(
            TokenProblem([ds]), OptimizerSpec("ngd", lr=0.1), iterations=2,
            log_iterations=np.arange(3), W_mm=W_mm,
        )  # fmt: skip


def test_invalid_requests():
    ds = models.generate("dm", 0, dict(n=6, T=4, d=10))
    problem = TokenProblem([ds])
    W_mm = np.eye(10)[None]
    with pytest.raises(ValueError, match="u_mm"):
        kernel.train(problem, OptimizerSpec("gd"), iterations=1, log_iterations=[0, 1], W_mm=W_mm,
                   train_u=True)  # fmt: skip
    with pytest.raises(ValueError, match="f\\*"):
        kernel.train(problem, OptimizerSpec("polyak"), iterations=1, log_iterations=[0, 1],
                   W_mm=W_mm, u_mm=np.ones((1, 10)), train_u=True)  # fmt: skip
    with pytest.raises(ValueError, match="loss"):
        kernel.train(problem, OptimizerSpec("gd"), iterations=1, log_iterations=[0, 1], W_mm=W_mm,
                   loss="square")  # fmt: skip
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
    ds = global_convergence.perturbed_example1(
        np.random.default_rng(0), n=6, T=4, d=20, correlation=1.0
    )
    W0s, _ = global_convergence.random_initialisations(np.random.default_rng(1), 20, 6, [1.0, 4.0])
    W_mm = max_margin.solve_w_svm(ds["X"], ds["opt"]).W
    grid = log_grid(300, 20)
    spec = OptimizerSpec("polyak")
    got, got_final, record = dispatch.train_batch(
        [ds], spec, W0s=W0s, W_mm=W_mm[None], iterations=300, log_iterations=grid
    )
    assert record["backend"] == "c"
    problem = attention.Problem.from_arrays([{**ds, "W0": W0} for W0 in W0s])
    ref, ref_final = torch_loop.train(
        problem, spec, iterations=300, log_iterations=grid, W_mm=torch.as_tensor(W_mm[None])
    )
    _assert_tables_agree(ref, got)
    np.testing.assert_allclose(got_final["W"], ref_final["W"].numpy(), rtol=1e-10, atol=1e-12)


def test_backend_choice():
    assert kernel_library.available()
    assert dispatch.backend("auto", "float64") == "c"
    assert dispatch.backend("cpu", "float64") == "c"
    assert dispatch.backend("cpu", "float32") == "torch"
    assert dispatch.backend("cuda", "float64") == "torch"
    assert dispatch.record("c", "cpu") == kernel_library.kernel_info()
    assert kernel_library.kernel_info()["backend"] == "c"


def test_a_file_of_runs_on_two_backends_records_both():
    """dispatch.merged_record: one record where the runs agree, both values where not."""
    c, torch_cpu = dispatch.record("c", "cpu"), dispatch.record("torch", "cpu")
    assert dispatch.merged_record([c, c]) == c
    both = dispatch.merged_record([c, torch_cpu, c])
    assert both["backend"] == "c + torch" and both["device"] == "cpu"
    assert both["torch"] == " + ".join(sorted({"not used", torch.__version__}))
    assert both["kernel"] == f"{c['kernel']} + none"  # the torch record has no kernel


def test_the_kernel_supports_every_rule_it_implements():
    for spec in (*FIXED, *JOINT):
        assert kernel.supports(spec), spec.caption()
        assert dispatch.backend("cpu", "float64", spec) == "c"


@dataclasses.dataclass(frozen=True)
class _SpecWithAnExtraSetting(OptimizerSpec):
    nesterov: bool = True  # a setting the kernel does not read


@dataclasses.dataclass(frozen=True)
class _OtherRule:
    rule: str = "adam"  # a rule the kernel does not know
    normalize: str = "global"
    f_star: str = "opt"


def test_an_optimizer_the_kernel_lacks_trains_on_torch():
    """kernel.supports refuses a rule it does not know and a setting it does not read, and
    the dispatcher then trains on torch (the hook an optimizer without a C counterpart uses)."""
    extra = _SpecWithAnExtraSetting("ngd", lr=0.1)
    for spec in (_OtherRule(), extra):
        assert not kernel.supports(spec)
        assert dispatch.backend("cpu", "float64", spec) == "torch"
    ds = models.generate("bad_direction", 0, FIG8)
    W_mm, _ = _solutions([ds], False)
    table, _, record = dispatch.train_batch(
        [ds], extra, W_mm=W_mm, iterations=20, log_iterations=log_grid(20, 5)
    )
    assert record["backend"] == "torch" and np.isfinite(table["log_loss"]).all()


def test_a_training_job_never_imports_torch(tmp_path):
    """The job's entry (dispatch.run, as workflow/scripts/train.py calls it) stays torch-free."""
    code = """
import sys
import numpy as np
from attnbias.data import models
from attnbias.training import dispatch
from attnbias.svm import max_margin
ds = models.generate("example1", 0, dict(n=6, T=4, d=10))
sol = max_margin.to_arrays(max_margin.solve_for_dataset(ds, False, "t"))
config = dict(iterations=50, log_points=10, grid="log", loss="exponential", train_u=False)
its, metrics, final, info = dispatch.run(ds, sol, config, dict(rule="ngd", lr=0.1))
assert info["backend"] == "c" and np.isfinite(metrics["log_loss"]).all()
assert "torch" not in sys.modules, "torch was imported"
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_training_job_on_torch_gives_the_kernels_numbers(monkeypatch):
    """dispatch.run on both backends (torch by the supports hook): the same run, each
    recording where it trained."""
    from attnbias.training import devices

    ds = models.generate("dm", 0, DM)
    sol = max_margin.to_arrays(max_margin.solve_for_dataset(ds, True, "t"))
    config = dict(iterations=60, log_points=10, grid="log", loss="logistic", train_u=True)
    args = (ds, sol, config, dict(rule="ngd", lr=0.1, momentum=0.5))
    its, got, got_final, got_info = dispatch.run(*args, device="cpu", threads=1)
    monkeypatch.setattr(kernel, "supports", lambda spec: False)
    ref_its, ref, ref_final, ref_info = dispatch.run(*args, device="cpu", threads=1)
    assert got_info == kernel_library.kernel_info()
    assert ref_info == {**devices.device_info(torch.device("cpu")), "backend": "torch"}
    np.testing.assert_array_equal(its, ref_its)
    _assert_tables_agree({k: v[None] for k, v in ref.items()}, {k: v[None] for k, v in got.items()})
    for key in ("W", "u"):
        np.testing.assert_allclose(got_final[key], ref_final[key], rtol=1e-10, atol=1e-12)


def test_kernel_is_built_once_per_source(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNBIAS_CACHE", str(tmp_path))
    first = kernel_library.kernel_path()
    assert first.parent == tmp_path and first.exists()
    assert kernel_library.kernel_path() == first
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no temporary left over


def test_metrics_table_without_pandas_equals_pa_table():
    """io.metrics_table builds its arrays from buffers (pa.array imports pandas): the same
    table as pa.table would give, and no pandas imported."""
    code = """
import sys
import numpy as np
import pyarrow as pa
from attnbias.workflow import io
metrics = {"b": np.array([1.0, np.nan, 3.0]), "a": np.array([7.0]), "c": np.array([0.5, 1, 2])}
table = io.metrics_table("fig2", "ngd-mom", 3, np.array([0, 5, 10]), metrics)
assert "pandas" not in sys.modules
ref = pa.table({
    "experiment": pa.array(["fig2"] * 6, pa.string()),
    "optimizer": pa.array(["ngd-mom"] * 6, pa.string()),
    "seed": pa.array(np.full(6, 3, dtype=np.int64)),
    "iteration": pa.array(np.array([10, 0, 10, 0, 5, 10])),
    "metric": pa.array(["a", "b", "b", "c", "c", "c"], pa.string()),
    "value": pa.array(np.array([7.0, 1.0, 3.0, 0.5, 1.0, 2.0])),
})
assert table.equals(ref) and table.schema == ref.schema, (table, ref)
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_study_mode_gives_diverged_runs_nan_and_keeps_the_others(monkeypatch):
    """nonfinite="nan" (the study): as torch_loop.train with the batch split until the diverged
    runs are alone (dispatch.train_batch on the torch backend)."""
    ds = global_convergence.perturbed_example1(
        np.random.default_rng([0, 0]), n=10, T=4, d=50, correlation=2, query_signal=0.5
    )
    W0s, _ = global_convergence.random_initialisations(
        np.random.default_rng([0, 1]), 50, 12, [1, 10, 100]
    )
    W_mm = max_margin.solve_w_svm(ds["X"], ds["opt"]).W
    grid = log_grid(1000, 30)
    spec = OptimizerSpec("polyak")  # uncapped: some runs overflow
    kw = dict(W0s=W0s, W_mm=W_mm[None], iterations=1000, log_iterations=grid, only="study")
    got, got_final, got_record = dispatch.train_batch([ds], spec, **kw)
    monkeypatch.setattr(kernel, "supports", lambda spec: False)  # the reference: torch
    ref, ref_final, ref_record = dispatch.train_batch([ds], spec, **kw)
    assert (got_record["backend"], ref_record["backend"]) == ("c", "torch")
    lost = np.isnan(ref["gap_W"][:, -1])
    assert lost.any() and not lost.all()
    assert set(ref) == {*logged_metrics(10, False), *CROSSING_METRICS}  # NaN under every name
    assert np.isnan(ref["log_loss"][lost]).all() and np.isnan(ref_final["u"][lost]).all()
    for key, values in (("gap_W", got), ("opt_softmax", got), ("W", got_final)):
        reference = (ref_final if key == "W" else ref)[key]
        np.testing.assert_array_equal(np.isnan(values[key]), np.isnan(reference))
        finite = ~np.isnan(reference)
        np.testing.assert_allclose(values[key][finite], reference[finite], rtol=1e-10, atol=1e-13)


def test_editing_the_kernel_reruns_training():
    """The training rule's code inputs (codedeps.module_files) include the C source."""
    from attnbias.workflow.codedeps import module_files

    files = module_files(str(Path(__file__).resolve().parents[1] / "workflow/scripts/train.py"))
    assert str(kernel_library.KERNEL_SOURCE) in files


@pytest.mark.parametrize(
    ("model", "params", "train_u", "optimizer"),
    [
        ("example1", dict(n=6, T=4, d=10), False, dict(rule="ngd", lr=0.1)),
        ("example1", dict(n=6, T=4, d=10), False, dict(rule="polyak", eta_max=1e10, f_star="opt")),
        ("dm", DM, True, dict(rule="ngd", lr=0.1, momentum=0.5)),
    ],
    ids=["ngd", "polyak", "dm-joint-momentum"],
)
def test_a_training_jobs_batch_of_seeds_gives_each_seeds_run_alone(
    model, params, train_u, optimizer
):
    """dispatch.run_seeds (one kernel call for every seed of the training job) against
    dispatch.run one seed at a time: equal to 1e-12 relative, metric by metric."""
    datasets = [models.generate(model, seed, params) for seed in range(3)]
    solutions = [
        max_margin.to_arrays(max_margin.solve_for_dataset(ds, train_u, "t")) for ds in datasets
    ]
    config = dict(iterations=80, log_points=10, grid="log", loss="logistic", train_u=train_u)
    its, batch, batch_final, info = dispatch.run_seeds(datasets, solutions, config, optimizer)
    assert info["backend"] == "c"
    for k, (ds, solution) in enumerate(zip(datasets, solutions, strict=True)):
        alone_its, alone, alone_final, _ = dispatch.run(ds, solution, config, optimizer)
        np.testing.assert_array_equal(its, alone_its)
        assert batch[k].keys() == alone.keys()
        for name in alone:
            np.testing.assert_allclose(batch[k][name], alone[name], rtol=1e-12, err_msg=name)
        for name in alone_final:
            np.testing.assert_allclose(batch_final[k][name], alone_final[name], rtol=1e-12)
    # negative control: another seed's run is not this one's
    assert not np.allclose(batch[0]["log_loss"], batch[1]["log_loss"], rtol=1e-12)
