"""Which backend trains the synthetic runs, and the runs trained on it: the one place that
chooses, and its one entry, `train`. The training job (through workflow.seed_runs), the
global-convergence study and the sweeps all call it.

Backends, each a stepper of the one loop (attnbias.training.loop): "c", the compiled
kernel (attnbias.training.kernel), "torch", the reference step
(attnbias.training.torch_loop), both in token coordinates, or "full", the numpy step on
the full W (attnbias.training.full_matrix). What the rule declares decides
(attnbias.optim.rules): a direction rule (not a gradient multiple: sign, Adam, ...) leaves
the token coordinates and trains on "full", in float64 on the CPU whatever the device.
For a gradient multiple, `auto` and `cpu` in float64 take the kernel where it builds and
implements the rule (kernel.supports): at these sizes a step is a few microseconds of
arithmetic, which a GPU cannot speed up (its launch latency alone is longer), so `auto`
never moves the synthetic runs to CUDA. `cuda[:N]` and float32 take torch; so do a machine
where the kernel cannot be built (no C compiler) and a rule the kernel does not implement.

`train` returns the results and `record`: the backend record that a run's file stores for
the provenance (attnbias.workflow.provenance.training_info). torch is imported only when
it trains, so the training job's entry stays torch-free (tests/training/test_dispatch.py).
"""

from __future__ import annotations

import numpy as np

from attnbias.optim.spec import OptimizerSpec
from attnbias.training import full_matrix, kernel, kernel_library, loop
from attnbias.training.token_problem import TokenProblem


def _kernel_eligible(device: str, dtype: str) -> bool:
    return device in ("auto", "cpu") and dtype == "float64"


def backend(device: str, dtype: str, spec: OptimizerSpec | None = None) -> str:
    """ "c", "torch" or "full" for runs on `device` in `dtype` with the optimizer `spec` (see
    the module's doc; its rule: spec.definition); spec None: whichever trains the
    optimizers the kernel implements."""
    if spec is not None and not spec.definition.gradient_multiple:
        return "full"
    supported = spec is None or kernel.supports(spec)
    if _kernel_eligible(device, dtype) and supported and kernel_library.available():
        return "c"
    return "torch"


def record(chosen: str, device: str) -> dict[str, str]:
    """What provenance stores of runs trained on backend `chosen` ("c" or "torch")."""
    if chosen == "c":
        return kernel_library.kernel_info()
    if chosen == "full":
        return {"device": "cpu", "backend": "full", "numpy": np.__version__, "torch": "not used"}
    from attnbias.training import devices

    return {**devices.device_info(devices.resolve_device(device)), "backend": "torch"}


def merged_record(records: list[dict[str, str]]) -> dict[str, str]:
    """One record for runs stored in one file (a sweep point, a study job): the record where
    they agree; where some optimizer trained elsewhere, each differing value lists the
    distinct values, joined by " + "."""
    keys = list(dict.fromkeys(key for rec in records for key in rec))
    values = {key: sorted({rec.get(key, "none") for rec in records}) for key in keys}
    return {key: " + ".join(found) for key, found in values.items()}


def backend_line(device: str, dtype: str) -> str:
    """One line for the console at workflow start: which backend trains, and why."""
    if not _kernel_eligible(device, dtype):
        return f"attnbias: training on torch (device {device}, dtype {dtype})"
    reason = kernel_library.unavailable_reason()
    if reason is None:
        name = kernel_library.kernel_path().name
        return f"attnbias: training on the compiled C kernel ({kernel_library.compiler()}, {name})"
    return (
        "attnbias: training on torch, many times slower (docs/environment.md): "
        f"the C kernel is unavailable: {reason}"
    )


def train(
    datasets: list[dict],
    spec: OptimizerSpec,
    *,
    W_mm: np.ndarray,
    u_mm: np.ndarray | None = None,
    W0s: np.ndarray | None = None,
    iterations: int,
    log_iterations: np.ndarray,
    train_u: bool = False,
    loss: str = "exponential",
    only: str | None = None,
    nonfinite: str = "nan",
    labels: list[str] | None = None,
    device: str = "cpu",
    dtype: str = "float64",
    threads: int | None = None,
    extra_metrics: loop.ExtraMetrics | None = None,
):
    """Independent runs of `spec` in one batch, on the backend `backend` chooses: datasets
    of the data file contract (of equal (n, T, d)), or with W0s one dataset and many
    initial matrices; W_mm (B|1, d, d), u_mm (B|1, d). Each run gives the numbers it gives
    alone (tests/workflow/test_train_job.py).

    nonfinite, labels, only, extra_metrics: as training.loop.train (nonfinite "nan": a run
    whose metric or parameter stops being finite gets NaN everywhere; "raise": it raises
    metrics.NonFiniteError, named by its label). threads: torch's thread count, where torch
    trains. Returns (table {name: (B, len(log_iterations)), crossings (B, 1)}, final
    {"W", "u"} as numpy, record).
    """
    chosen = backend(device, dtype, spec)
    if chosen == "torch":
        from attnbias.training import torch_loop

        if threads is not None:
            import torch

            torch.set_num_threads(threads)
        stepper = torch_loop.TorchStepper
        problem = torch_loop.problem_of(datasets, W0s, device=device, dtype=dtype)
    else:
        stepper = kernel.KernelStepper if chosen == "c" else full_matrix.FullMatrixStepper
        problem = TokenProblem(datasets, W0s)
    table, final = loop.train(
        stepper, problem, spec, iterations=iterations, log_iterations=log_iterations,
        W_mm=W_mm, u_mm=u_mm, train_u=train_u, loss=loss, only=only, nonfinite=nonfinite,
        extra_metrics=extra_metrics, labels=labels,
    )  # fmt: skip
    return table, final, record(chosen, device)
