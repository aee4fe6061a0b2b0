"""The runs of one optimizer on every seed of an experiment, from the config and the data
and svm stages' files: the training job's call of dispatch.train (workflow/scripts/train.py;
the robustness points train again with it). One batch for all seeds; a run that stops being
finite, or whose start its rule refuses, raises naming it by `labels`."""

from __future__ import annotations

import numpy as np

from attnbias.optim.spec import OptimizerSpec
from attnbias.training import dispatch
from attnbias.training.metrics import log_grid


def train_seeds(
    datasets: list[dict],
    svm_solutions: list[dict],
    train_config: dict,
    spec: OptimizerSpec,
    *,
    labels: list[str] | None = None,
    device: str = "auto",
    dtype: str = "float64",
    threads: int | None = None,
    extra_metrics=None,
):
    """dispatch.train of `spec` (the job's optimizer, resolved from its config entry by its
    caller: optim.spec.spec_of) on each seed's dataset and svm arrays, under
    `train_config` (iterations, log grid, train_u, loss). Returns (log iterations,
    [metrics {name: (len,)}] and [final {"W", "u"}] per seed, record)."""

    def reference(key):
        if key not in svm_solutions[0]:
            return None
        return np.stack([np.asarray(solution[key]) for solution in svm_solutions])

    grid = log_grid(train_config["iterations"], train_config["log_points"], train_config["grid"])
    table, final, record = dispatch.train(
        datasets, spec, W_mm=reference("W_mm"),
        u_mm=reference("u_mm"), iterations=train_config["iterations"], log_iterations=grid,
        train_u=train_config["train_u"], loss=train_config["loss"], nonfinite="raise",
        labels=labels, device=device, dtype=dtype, threads=threads, extra_metrics=extra_metrics,
    )  # fmt: skip
    metrics = [{name: values[i] for name, values in table.items()} for i in range(len(datasets))]
    finals = [{name: values[i] for name, values in final.items()} for i in range(len(datasets))]
    return grid, metrics, finals, record
