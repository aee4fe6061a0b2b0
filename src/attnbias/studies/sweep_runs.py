"""One point of a sweep, trained in one job: its data, SVMs and every optimizer x seed.

A point is an experiment of the config with some settings changed (attnbias.studies.sweep_grid).
Its seeds' datasets and max-margin solutions are made here (models.generate and
max_margin.solve_for_dataset, as the data and svm rules make them), and each optimizer trains
every seed in one batch, on the backend that attnbias.training.dispatch picks for it, as for a
training job. A run whose loss stops being finite gets NaN and `diverged`; the others keep
their numbers.

Returns two tables and a record: the runs (one row per optimizer x seed: the metrics the
sweep asks for, attnbias.studies.sweep_metrics, the run's share of its batch's training time
`train_s`, and the data's Condition-1 quantities), the curves (the logged 1 - cos of W and u
and log L of every run, which curve claims read), and where they trained, which the point's
file stores for the provenance (dispatch.merged_record).

Apart from attnbias.studies.sweep_tables, which judges and draws without torch (the plotting env).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from attnbias.data import models
from attnbias.optim.spec import resolve
from attnbias.studies import sweep_metrics
from attnbias.svm import max_margin
from attnbias.training import dispatch
from attnbias.training.metrics import log_grid


def condition_report(dataset: dict[str, np.ndarray]) -> dict[str, float]:
    """The data-side quantities of Condition 1 for one dataset.

    opt_norm_ratio: min_i ||x_{i,opt}|| / max_{i, t != opt} ||x_{i,t}|| (> 1: every optimal
    token is longer than every other token, the "larger norm" of Condition 1); d_over_n;
    and models.assumption_report's max_offdiag_inner and min_sq_norm (near-orthogonality).
    """
    X, opt = dataset["X"], dataset["opt"]
    n, T, d = X.shape
    norms = np.linalg.norm(X, axis=-1)
    is_opt = np.arange(T)[None, :] == opt[:, None]
    report = models.assumption_report(dataset)
    return {
        "opt_norm_ratio": float(norms[is_opt].min() / norms[~is_opt].max()),
        "d_over_n": d / n,
        "max_offdiag_inner": report["max_offdiag_inner"],
        "min_sq_norm": report["min_sq_norm"],
    }


def point_data(experiment: dict, label: str) -> tuple[list[dict], list[dict]]:
    """Seeds 0..seeds-1 of the experiment's data, and their max-margin solutions."""
    spec = experiment["data"]
    datasets = [
        models.generate(spec["model"], seed, spec.get("params", {}))
        for seed in range(experiment["seeds"])
    ]
    train_u = experiment["train"]["train_u"]
    solutions = [
        max_margin.to_arrays(
            max_margin.solve_for_dataset(ds, train_u, name=f"{label}, seed {seed}")
        )
        for seed, ds in enumerate(datasets)
    ]
    return datasets, solutions


def run_point(
    experiment: dict,
    metrics: list[str],
    *,
    label: str = "sweep point",
    device: str = "cpu",
    dtype: str = "float64",
    threads: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """(runs, curves, record) of every optimizer x seed of `experiment` (a point's, with `seeds`,
    `data`, `train` and label-free `optimizers`); see the module's doc."""
    datasets, solutions = point_data(experiment, label)
    train = experiment["train"]
    grid = log_grid(train["iterations"], train["log_points"], train["grid"])
    W_mm = np.stack([s["W_mm"] for s in solutions])
    u_mm = np.stack([s["u_mm"] for s in solutions]) if train["train_u"] else None
    kwargs = dict(
        iterations=train["iterations"],
        log_iterations=grid,
        train_u=train["train_u"],
        loss=train["loss"],
        device=device,
        dtype=dtype,
        threads=threads,
    )
    conditions = pd.DataFrame([condition_report(ds) for ds in datasets])
    seeds = np.arange(len(datasets))
    runs, curves, records = [], [], []
    # the point's optimizers, resolved once
    for name, spec in resolve(experiment["optimizers"], real=False).items():
        start = time.perf_counter()
        table, _, record = dispatch.train(datasets, spec, W_mm=W_mm, u_mm=u_mm, **kwargs)
        records.append(record)
        # each run's share of its batch's training time (benchmarks/sweep.py sums them)
        train_s = (time.perf_counter() - start) / len(datasets)
        batch = sweep_metrics.Runs(name, np.asarray(grid), table, datasets, solutions)
        values = sweep_metrics.compute(metrics, batch)
        diverged = np.isnan(batch.series("log_loss")).any(axis=1)
        runs.append(
            pd.DataFrame(
                {
                    "optimizer": name,
                    "seed": seeds,
                    **values,
                    "diverged": diverged,
                    "train_s": train_s,
                }
            ).join(conditions)
        )
        logged = len(grid)
        curves.append(
            pd.DataFrame(
                {
                    "optimizer": name,
                    "seed": np.repeat(seeds, logged),
                    "t": np.tile(np.asarray(grid), len(seeds)),
                    **{c: batch.series(c).reshape(-1) for c in sweep_metrics.CURVES},
                }
            )
        )
    runs, curves = pd.concat(runs, ignore_index=True), pd.concat(curves, ignore_index=True)
    return runs, curves, dispatch.merged_record(records)
