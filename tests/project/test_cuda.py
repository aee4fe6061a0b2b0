"""Tests that need a CUDA GPU; skipped where there is none.

1. The synthetic training loop gives the same numbers on the GPU as on the CPU: every
   metric at every logged iteration of 2000 float64 steps agrees to 1e-10 relative, for
   each optimizer, with the decoder fixed (Example 1) and trained jointly (DM).
2. One bf16-autocast training step of a tiny BERT and a tiny ViT-small, for SGD, SNGD, SPS
   and Adam: finite loss, the parameters move, and a few steps on a fixed batch lower it.
3. Checkpoint and resume through `realdata.trainer.fit` on the GPU: a run interrupted after
   a checkpoint and restarted logs exactly what an uninterrupted run logs.
4. A training step of `fit` does not synchronize with the GPU (torch's sync debug mode).

Every helper takes the device as an argument, so the same setup runs on the CPU while
developing (e.g. `run_pair(case, "cpu", "cpu")`, `bf16_steps(..., "cpu")`,
`resume_against_uninterrupted(..., "cpu")`); the tests themselves pass "cuda".
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tiny_runs import (
    MODELS,
    RESUME_OPTIMIZERS,
    assert_same_run,
    resume_against_uninterrupted,
    resume_task,
)

from attnbias.data import models
from attnbias.model import attention
from attnbias.optim.spec import OptimizerSpec
from attnbias.optim.stochastic import SNGD, SPS
from attnbias.realdata import trainer
from attnbias.svm import max_margin
from attnbias.training import loop, metrics
from attnbias.training.torch_loop import TorchStepper

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

DEVICES = ["cuda"]  # the device under test; the helpers accept "cpu" as well

F64 = torch.float64


# ---------------------------------------------------------------- 1. CPU against GPU

ITERATIONS = 2000
RTOL = 1e-10


@functools.cache
def synthetic_datasets(kind: str) -> tuple[dict, ...]:
    """Three runs in one batch. "example1": the fixed decoder, W0 = 0 in two runs and a
    random W0 in the third. "dm": u trained jointly from u0 = 0 in two runs and from a
    small random u0 in the third (W0 = 0)."""
    if kind == "example1":
        datasets = [models.generate("example1", seed, dict(n=8, T=4, d=12)) for seed in (0, 1, 2)]
        datasets[2]["W0"] = np.random.default_rng(7).standard_normal((12, 12))
    elif kind == "dm":
        # n = 4: the per-sample opt softmaxes are logged too (metrics.PER_SAMPLE_LIMIT)
        datasets = [models.generate("dm", seed, dict(n=4, T=4, d=12)) for seed in (0, 1, 2)]
        datasets[2]["u"] = 0.1 * np.random.default_rng(8).standard_normal(12)
    else:
        raise ValueError(kind)
    return tuple(datasets)


@functools.cache
def max_margin_solutions(kind: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(W_mm, u_mm) of the batch, (B, d, d) and (B, d) (u_mm None for a fixed decoder)."""
    datasets = synthetic_datasets(kind)
    W_mm = np.stack([max_margin.solve_w_svm(ds["X"], ds["opt"]).W for ds in datasets])
    if kind != "dm":
        return W_mm, None
    return W_mm, np.stack(
        [max_margin.solve_u_svm(ds["X"], ds["y"], ds["opt"]).u for ds in datasets]
    )


# (problem, optimizer): the fixed decoder takes every rule (Polyak with f* = the loss at all
# attention on opt); joint training the global and the per-block NGD norm, and Polyak f* = 0.
CASES = [
    ("example1", OptimizerSpec("gd", lr=1.0)),
    ("example1", OptimizerSpec("ngd", lr=0.1)),
    ("example1", OptimizerSpec("ngd", lr=0.1, max_step=50.0)),
    ("example1", OptimizerSpec("ngd", lr=0.1, momentum=0.9)),
    ("example1", OptimizerSpec("polyak", f_star="opt")),
    ("example1", OptimizerSpec("polyak", f_star="opt", eta_max=50.0)),
    ("dm", OptimizerSpec("gd", lr=0.3, lr_u=0.05)),
    ("dm", OptimizerSpec("ngd", lr=0.1, normalize="per_block")),
    ("dm", OptimizerSpec("ngd", lr=0.1, normalize="global")),
    ("dm", OptimizerSpec("polyak", f_star=0.0)),
]


def case_id(case) -> str:
    kind, spec = case
    return f"{kind}: {spec.caption()}"


def synthetic_run(kind: str, spec: OptimizerSpec, device, iterations: int = ITERATIONS):
    """loop.train on the torch stepper in float64 on `device`: (metrics table, final as numpy)."""
    device = torch.device(device)
    problem = attention.Problem.from_arrays(
        list(synthetic_datasets(kind)), device=device, dtype=F64
    )
    W_mm, u_mm = max_margin_solutions(kind)

    def on_device(a):
        return None if a is None else torch.as_tensor(a, dtype=F64, device=device)

    table, final = loop.train(
        TorchStepper,
        problem,
        spec,
        iterations=iterations,
        log_iterations=metrics.log_grid(iterations, 40),
        W_mm=on_device(W_mm),
        u_mm=on_device(u_mm),
        train_u=kind == "dm",
    )
    assert problem.X.device.type == device.type  # it really ran there (final: numpy)
    return table, final


def run_pair(case, device_a="cpu", device_b="cuda", iterations: int = ITERATIONS):
    """The same run on two devices: ((table_a, final_a), (table_b, final_b))."""
    kind, spec = case
    return (
        synthetic_run(kind, spec, device_a, iterations),
        synthetic_run(kind, spec, device_b, iterations),
    )


def relative_differences(a: dict, b: dict) -> dict[str, float]:
    """Per metric, the largest |a - b| / max(|b|, tiny) over the finite entries, tiny the
    smallest normal float64: below it (e.g. `loss` = exp(log_loss) at log_loss < -708)
    numbers are subnormal and carry no relative precision to compare. Raises
    AssertionError where the NaNs or the infinities differ."""
    assert set(a) == set(b)
    worst = {}
    for name in sorted(a):
        x, y = np.asarray(a[name], dtype=np.float64), np.asarray(b[name], dtype=np.float64)
        assert x.shape == y.shape, name
        np.testing.assert_array_equal(np.isnan(x), np.isnan(y), err_msg=f"NaN positions: {name}")
        finite = np.isfinite(y)
        np.testing.assert_array_equal(x[~finite], y[~finite], err_msg=f"non-finite: {name}")
        x, y = x[finite], y[finite]
        rel = np.abs(x - y) / np.maximum(np.abs(y), np.finfo(np.float64).tiny)
        worst[name] = float(rel.max()) if rel.size else 0.0
    return worst


def assert_tables_agree(a: dict, b: dict, rtol: float = RTOL) -> None:
    worst = relative_differences(a, b)
    bad = {name: rel for name, rel in worst.items() if not rel <= rtol}
    assert not bad, f"metrics differ by more than {rtol:g} relative: {bad}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_synthetic_training_agrees_on_cpu_and_gpu(case):
    (table_cpu, final_cpu), (table_gpu, final_gpu) = run_pair(case, "cpu", "cuda")
    assert_tables_agree(table_gpu, table_cpu)
    for name in ("W", "u"):  # the final parameters, relative to each run's norm
        scale = np.linalg.norm(final_cpu[name].reshape(3, -1), axis=1)[:, None]
        diff = np.abs(final_gpu[name] - final_cpu[name]).reshape(3, -1)
        assert np.all(diff <= RTOL * scale), name


# ---------------------------------------------------------------- 2. bf16 training steps

# settings under which a few steps on one batch of 16 lower the loss of both models
OPTIMIZERS = {
    "sgd": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    "sngd": lambda params: SNGD(params, lr=0.1, momentum=0.5),
    "sps": lambda params: SPS(params, eta_max=0.1, c=0.5),
    "adam": lambda params: torch.optim.Adam(params, lr=3e-3),
}


def _inputs(batch):
    return {k: v for k, v in batch.items() if k != "labels"}


def bf16_steps(model_name: str, optimizer_name: str, device, steps: int = 12) -> dict:
    """`steps` training steps on one fixed batch under bf16 autocast, as trainer.fit takes
    them (forward in autocast, cross-entropy of the logits in float32).

    Returns losses (before each step, then after the last), the logits' dtype, the first
    step's gradients' finiteness, and which parameters the first step changed.
    """
    device = torch.device(device)
    build, make_data, logits_of = MODELS[model_name]
    model = build().to(device).train()
    optimizer = OPTIMIZERS[optimizer_name](model.parameters())
    batch = {k: v.to(device) for k, v in make_data(16).items()}

    def loss_and_dtype():
        with torch.autocast(device.type, dtype=torch.bfloat16):
            logits = logits_of(model, _inputs(batch))
        return F.cross_entropy(logits.float(), batch["labels"]), logits.dtype

    out = {"losses": []}
    for step in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss, dtype = loss_and_dtype()
        out["losses"].append(float(loss.detach()))
        loss.backward()
        if step == 0:
            out["logits_dtype"] = dtype
            out["grads_finite"] = all(
                bool(torch.isfinite(p.grad).all()) for p in model.parameters() if p.grad is not None
            )
            before = {name: p.detach().clone() for name, p in model.named_parameters()}
        if isinstance(optimizer, SPS):
            optimizer.step(loss=loss.detach())
        else:
            optimizer.step()
        if step == 0:
            params = dict(model.named_parameters())
            out["changed"] = {name: not torch.equal(params[name], before[name]) for name in before}
            out["param_dtypes"] = {p.dtype for p in model.parameters()}
    with torch.no_grad():
        out["losses"].append(float(loss_and_dtype()[0]))
    return out


def check_bf16_steps(out: dict, model_name: str) -> None:
    losses = out["losses"]
    assert out["logits_dtype"] == torch.bfloat16  # the forward really ran in bf16
    assert out["param_dtypes"] == {torch.float32}  # the weights stay float32
    assert all(math.isfinite(v) for v in losses), losses
    assert out["grads_finite"]
    changed = out["changed"]
    head = "classifier." if model_name == "bert" else "head."
    assert all(v for name, v in changed.items() if name.startswith(head)), changed
    assert sum(changed.values()) >= 0.9 * len(changed), [k for k, v in changed.items() if not v]
    assert losses[-1] < 0.9 * losses[0], losses  # a few steps on one batch lower the loss


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("optimizer_name", list(OPTIMIZERS))
@pytest.mark.parametrize("model_name", list(MODELS))
def test_bf16_training_step(model_name, optimizer_name, device):
    check_bf16_steps(bf16_steps(model_name, optimizer_name, device), model_name)


# ---------------------------------------------------------------- 3. checkpoint and resume


@pytest.fixture
def deterministic(monkeypatch):
    """Deterministic CUDA kernels where torch has a choice (e.g. the memory-efficient
    attention's backward, which BERT's SDPA attention with a padding mask uses), warning
    where it has none; restored afterwards."""
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    mode = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    yield
    torch.use_deterministic_algorithms(mode, warn_only=warn_only)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("optimizer_name", list(RESUME_OPTIMIZERS))
@pytest.mark.parametrize("model_name", list(MODELS))
def test_resume_on_gpu_gives_the_uninterrupted_metrics(
    model_name, optimizer_name, device, tmp_path, deterministic
):
    """Exact equality, with bf16 autocast on (fit's default on CUDA): autocast changes
    which values are computed, not whether they are reproducible. The resumed run
    restarts from the exact float32 weights, optimizer state, random state (dropout) and
    log window, and replays the same kernels on the same inputs; so any difference is a
    resume bug, not rounding. The uninterrupted run is repeated first, so a GPU that does
    not reproduce itself is reported as such."""
    reference, again, resumed = resume_against_uninterrupted(
        model_name, optimizer_name, device, tmp_path
    )
    steps, metrics = reference
    assert list(steps) == [0, 3, 6, 9, 10]
    assert np.all(np.isfinite(metrics["train_loss"][1:]))
    assert_same_run(again, reference, "two uninterrupted runs (GPU reproducibility)")
    assert_same_run(resumed, reference, "resumed against uninterrupted")


# ---------------------------------------------------------------- 4. no sync per step


def _synchronizations(epochs: int, optimizer_name: str) -> int:
    """CUDA synchronizations torch reports (sync debug mode "warn") in a ViT fit run on the
    GPU that logs at step 0 and at the end only."""
    torch.manual_seed(0)
    task, _ = resume_task("vit")
    task.model_metrics = None
    optimizer = RESUME_OPTIMIZERS[optimizer_name](task.model.parameters())
    schedule = trainer.Schedule(epochs=epochs, batch_size=8, log_every=10**6, progress=False)
    mode = torch.cuda.get_sync_debug_mode()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            trainer.fit(task, optimizer, schedule, device=torch.device("cuda"))
        finally:
            torch.cuda.set_sync_debug_mode(mode)
    return sum("synchroniz" in str(w.message) for w in caught)


@pytest.mark.parametrize("optimizer_name", ["sgd", "sngd", "sps"])
def test_a_training_step_does_not_synchronize(optimizer_name):
    """The host runs ahead of the GPU. Ten more steps add no synchronization; the
    log points (which read the loss and the accuracy) do synchronize, so the count is not
    zero, which also shows that the debug mode reports."""
    # an unmeasured run first: a process's first fit synchronizes once more on first use
    # (seen on an H100: 39 against 38 for the first optimizer tested), which is no step's
    _synchronizations(1, optimizer_name)
    one, three = (_synchronizations(e, optimizer_name) for e in (1, 3))
    assert one > 0
    assert three == one, f"{three - one} more synchronizations over 10 more steps"
