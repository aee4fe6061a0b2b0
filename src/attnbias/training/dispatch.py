"""Which backend trains the synthetic runs, and the runs trained on it: the one place that
chooses. The training job, the global-convergence study and the sweeps all call it.

Backends: "c", the compiled kernel (attnbias.training.kernel), "torch", the reference
loop (attnbias.training.torch_loop), both in token coordinates, or "full", the numpy loop
on the full W (attnbias.training.full_matrix). What the rule declares decides
(attnbias.optim.rules): a direction rule (not a gradient multiple: sign, Adam, ...) leaves
the token coordinates and trains on "full", in float64 on the CPU whatever the device.
For a gradient multiple, `auto` and `cpu` in float64 take the kernel where it builds and
implements the rule (kernel.supports): at these sizes a step is a few microseconds of
arithmetic, which a GPU cannot speed up (its launch latency alone is longer), so `auto`
never moves the synthetic runs to CUDA. `cuda[:N]` and float32 take torch; so do a machine
where the kernel cannot be built (no C compiler) and a rule the kernel does not implement.

extra_metrics (run_seeds, train_batch): a function of the materialised W (B, d, d) and u
(B, d), numpy, giving more metrics {name: (B,)} at every logged iteration, on every backend
(None: nothing changes).

Each entry returns the results and `record`: the backend record that a run's file stores
for the provenance (attnbias.workflow.provenance.training_info). torch is imported only
when it trains, so the training job's entry stays torch-free (tests/test_dispatch.py).
"""

from __future__ import annotations

import numpy as np

from attnbias.optim import rules
from attnbias.optim.spec import OptimizerSpec
from attnbias.training import full_matrix, kernel, kernel_library
from attnbias.training.metrics import CROSSING_METRICS, log_grid, logged_metrics
from attnbias.training.token_problem import TokenProblem


def _kernel_eligible(device: str, dtype: str) -> bool:
    return device in ("auto", "cpu") and dtype == "float64"


def backend(device: str, dtype: str, spec: OptimizerSpec | None = None) -> str:
    """ "c", "torch" or "full" for runs on `device` in `dtype` with the optimizer `spec` (see
    the module's doc); spec None: whichever trains the optimizers the kernel implements."""
    if spec is not None and not rules.get(spec.rule).gradient_multiple:
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


def _use_threads(threads: int | None) -> None:
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def run(
    data: dict,
    svm_solution: dict,
    train_config: dict,
    optimizer_config: dict,
    *,
    device: str = "auto",
    dtype: str = "float64",
    threads: int | None = None,
):
    """One run from the files of the data and svm stages: `run_seeds` of one seed.

    Returns (log iterations, metrics {name: (len,)}, final {"W", "u"} as numpy, record).
    """
    grid, metrics, finals, info = run_seeds(
        [data], [svm_solution], train_config, optimizer_config,
        device=device, dtype=dtype, threads=threads,
    )  # fmt: skip
    return grid, metrics[0], finals[0], info


def run_seeds(
    datasets: list[dict],
    svm_solutions: list[dict],
    train_config: dict,
    optimizer_config: dict,
    *,
    device: str = "auto",
    dtype: str = "float64",
    threads: int | None = None,
    extra_metrics: full_matrix.ExtraMetrics | None = None,
):
    """The runs of one optimizer on every seed's data and svm files (the training job), in
    one batch: one kernel call, or one torch loop, for all seeds (of equal (n, T, d)). The
    runs are independent: each gives the numbers it gives alone (tests/test_dispatch.py).

    A run whose metric or parameter stops being finite raises metrics.NonFiniteError.
    Returns (log iterations, [metrics {name: (len,)}] and [final {"W", "u"}] per seed, record).
    threads: torch's thread count, where torch trains. extra_metrics: see the module doc.
    """
    spec = OptimizerSpec.from_config(optimizer_config)
    chosen = backend(device, dtype, spec)

    def reference(key):
        if key not in svm_solutions[0]:
            return None
        return np.stack([np.asarray(solution[key]) for solution in svm_solutions])

    grid = log_grid(train_config["iterations"], train_config["log_points"], train_config["grid"])
    kwargs = dict(
        iterations=train_config["iterations"],
        log_iterations=grid,
        W_mm=reference("W_mm"),
        u_mm=reference("u_mm"),
        train_u=train_config["train_u"],
        loss=train_config["loss"],
    )
    if extra_metrics is not None:
        kwargs["extra_metrics"] = extra_metrics
    if chosen in ("c", "full"):
        numpy_backend = kernel if chosen == "c" else full_matrix
        table, final = numpy_backend.train(TokenProblem(datasets), spec, **kwargs)
    else:
        from attnbias.training import torch_loop

        _use_threads(threads)
        table, final = torch_loop.train_arrays(datasets, spec, device=device, dtype=dtype, **kwargs)
    metrics = [{name: values[i] for name, values in table.items()} for i in range(len(datasets))]
    finals = [{name: values[i] for name, values in final.items()} for i in range(len(datasets))]
    return grid, metrics, finals, record(chosen, device)


def train_batch(
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
    device: str = "cpu",
    dtype: str = "float64",
    threads: int | None = None,
    extra_metrics: full_matrix.ExtraMetrics | None = None,
):
    """Independent runs in one batch (the study, the sweeps): datasets of the data file
    contract, or with W0s one dataset and many initial matrices; W_mm (B|1, d, d), u_mm
    (B|1, d). A run whose metric or parameter stops being finite gets NaN everywhere (its
    metrics and final W, u); the others keep their numbers.

    only="study": the kernel computes only what the study reads (log_loss, opt_softmax,
    gap_W: metric_formulas.row); torch computes all. extra_metrics: see the module doc.
    Returns (table {name: (B, len(log_iterations)), crossings (B, 1)}, final {"W", "u"} as
    numpy, record).
    """
    chosen = backend(device, dtype, spec)
    kwargs = dict(iterations=iterations, log_iterations=log_iterations, train_u=train_u, loss=loss)
    if extra_metrics is not None:
        kwargs["extra_metrics"] = extra_metrics
    if chosen in ("c", "full"):
        problem = TokenProblem(datasets, W0s)
        numpy_backend = kernel if chosen == "c" else full_matrix
        table, final = numpy_backend.train(
            problem, spec, W_mm=W_mm, u_mm=u_mm, only=only, nonfinite="nan", **kwargs
        )
        return table, final, record(chosen, device)
    from attnbias.training import torch_loop

    _use_threads(threads)
    if W0s is not None:
        datasets = [{**datasets[0], "W0": W0} for W0 in W0s]
    runs = len(datasets)
    W_mm = np.broadcast_to(W_mm, (runs, *np.shape(W_mm)[1:]))
    u_mm = None if u_mm is None else np.broadcast_to(u_mm, (runs, *np.shape(u_mm)[1:]))

    def train(part):
        return torch_loop.train_arrays(
            [datasets[i] for i in part],
            spec,
            W_mm=W_mm[part],
            u_mm=None if u_mm is None else u_mm[part],
            device=device,
            dtype=dtype,
            **kwargs,
        )

    n, _, d = np.shape(datasets[0]["X"])
    logged = len(log_iterations)

    def diverged():
        names = list(logged_metrics(n, train_u))
        if extra_metrics is not None:  # their names, from the initial parameters
            first = datasets[0]
            u0 = np.asarray(first.get("u", np.zeros(d)), dtype=np.float64)
            names += list(extra_metrics(np.asarray(first["W0"])[None], u0[None]))
        table = {name: np.full((1, logged), np.nan) for name in names}
        table |= {name: np.full((1, 1), np.nan) for name in CROSSING_METRICS}
        return table, {"W": np.full((1, d, d), np.nan), "u": np.full((1, d), np.nan)}

    table, final = _isolating_divergence(train, diverged, np.arange(runs))
    return table, final, record(chosen, device)


def _isolating_divergence(train, diverged, part: np.ndarray):
    """train(part) of the runs `part`; where it raises FloatingPointError (torch_loop.train
    stops the whole batch when one run diverges) the batch is split in halves until the
    diverged runs are alone, so the others keep their results and stay batched. A diverged
    run alone gets diverged(): NaN under every name."""
    try:
        return train(part)
    except FloatingPointError:
        if len(part) == 1:
            return diverged()
    halves = [_isolating_divergence(train, diverged, half) for half in np.array_split(part, 2)]
    return tuple(
        {key: np.concatenate([half[i][key] for half in halves]) for key in halves[0][i]}
        for i in range(2)
    )
