"""The fig3 sweep's training side: one DM data point, every optimizer and step size.

Fig. 3 of the paper trains W and u jointly on data model DM and orders the optimizers:
GD slowest, PS fastest, NGD slightly ahead of joint NGD in W and u, NGD ~ joint NGD in the
loss. The sweep (attnbias.sweep draws and judges it) asks where that order holds over the
settings that the paper's Condition 1 allows: the separation of the optimal token from the
others (mu_norm, noise_scale), the overparameterisation d / n and the step size.

One data point is (n, T, d, mu_norm, noise_scale). Its seeds are batched into one run per
optimizer (attention.Problem.from_arrays); the optimizers of rule ngd run once per step
size of the sweep, the others once (their step does not depend on it) and their rows are
repeated under every step size, so that every setting holds all four optimizers.

Apart from attnbias.sweep, which judges and draws without torch (the plotting env).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from attnbias import data, devices, svm, train
from attnbias.attention import Problem
from attnbias.optimizers import OptimizerSpec
from attnbias.spec import without

# Final values of these train.train metrics (at the last iteration) go into the table.
FINAL_METRICS = {
    "gap_W": "gap_W",
    "gap_u": "gap_u",
    "log_loss": "log_loss",
    "W_norm": "W_norm",
    "u_norm": "u_norm",
    "log1m_opt_softmax": "log1m_opt_softmax",
}
# train.train's exact first crossings of 1 - cos(W_t, W_mm) -> our column names
CROSSINGS = {
    "first_gap_W_below_0.01": "first_W_below_1e-2",
    "first_gap_W_below_0.001": "first_W_below_1e-3",
}
RUN_COLUMNS = [*FINAL_METRICS.values(), *CROSSINGS.values(), "diverged"]


def condition_report(dataset: dict[str, np.ndarray]) -> dict[str, float]:
    """The data-side quantities of Condition 1 for one DM dataset.

    opt_norm_ratio: min_i ||x_{i,opt}|| / max_{i, t != opt} ||x_{i,t}|| (> 1: every optimal
    token is longer than every other token, the "larger norm" of Condition 1); d_over_n;
    and data.assumption_report's max_offdiag_inner and min_sq_norm (near-orthogonality).
    """
    X, opt = dataset["X"], dataset["opt"]
    n, T, d = X.shape
    norms = np.linalg.norm(X, axis=-1)
    is_opt = np.arange(T)[None, :] == opt[:, None]
    report = data.assumption_report(dataset)
    return {
        "opt_norm_ratio": float(norms[is_opt].min() / norms[~is_opt].max()),
        "d_over_n": d / n,
        "max_offdiag_inner": report["max_offdiag_inner"],
        "min_sq_norm": report["min_sq_norm"],
    }


def _final(problem, spec, W_mm, u_mm, *, iterations, grid, loss) -> dict[str, np.ndarray]:
    """One batched run; the final metrics and crossings, each (B,)."""
    metrics, _ = train.train(
        problem,
        spec,
        iterations=iterations,
        log_iterations=grid,
        W_mm=W_mm,
        u_mm=u_mm,
        train_u=True,
        loss=loss,
    )
    out = {ours: metrics[name][:, -1] for name, ours in FINAL_METRICS.items()}
    out |= {ours: metrics[name][:, -1] for name, ours in CROSSINGS.items()}
    out["diverged"] = np.zeros(len(out["gap_W"]), dtype=bool)
    return out


def _runs(datasets, W_mm, u_mm, spec, *, device, dtype, **kwargs) -> dict[str, np.ndarray]:
    """`_final` for every seed in one batch; where the batch diverges (train.train stops when
    a run's loss stops being finite), seed by seed, with NaN and diverged for the runs that
    do."""
    problem = Problem.from_arrays(datasets, device=device, dtype=dtype)
    try:
        return _final(problem, spec, W_mm, u_mm, **kwargs)
    except FloatingPointError:
        if len(datasets) == 1:
            nan = np.full(1, np.nan)
            return {**dict.fromkeys(RUN_COLUMNS[:-1], nan), "diverged": np.ones(1, dtype=bool)}
    parts = [
        _runs([ds], W_mm[i : i + 1], u_mm[i : i + 1], spec, device=device, dtype=dtype, **kwargs)
        for i, ds in enumerate(datasets)
    ]
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def run_point(
    name: str,
    params: dict,
    optimizers: dict[str, dict],
    lrs: list[float],
    *,
    seeds: int,
    iterations: int,
    log_points: int = 30,
    loss: str = "exponential",
    device: str = "cpu",
    dtype: str = "float64",
) -> pd.DataFrame:
    """Train every optimizer on seeds 0..seeds-1 of DM data `params` (n, T, d, mu_norm,
    noise_scale), W0 = 0 and u0 = 0, for `iterations` full-batch steps.

    optimizers: name -> OptimizerSpec settings (a `label` is dropped). Those of rule ngd take
    each lr of `lrs` (an lr of their own is an error); the others run once and their rows are
    repeated for every lr. Returns one row per (lr, optimizer, seed): the point's name and
    params, lr, optimizer, seed, step_size (the optimizer's lr; NaN for polyak, whose step
    is adaptive), the final 1 - cos(W_t, W_mm) (gap_W), 1 - cos(u_t, u_mm) (gap_u), log L,
    ||W||, ||u||, log(1 - mean opt softmax), the exact first iterations with gap_W below
    1e-2 and 1e-3 (NaN: not within the run), diverged, and condition_report of the seed's data.
    """
    torch_device = devices.resolve_device(device)
    torch_dtype = getattr(torch, dtype)
    datasets = [data.generate("dm", seed, params) for seed in range(seeds)]
    solutions = [
        svm.to_arrays(svm.solve_for_dataset(ds, True, name=f"fig3 sweep {name}, seed {seed}"))
        for seed, ds in enumerate(datasets)
    ]

    def stacked(key):
        return torch.as_tensor(
            np.stack([s[key] for s in solutions]), dtype=torch_dtype, device=torch_device
        )

    W_mm, u_mm = stacked("W_mm"), stacked("u_mm")
    grid = train.log_grid(iterations, log_points)
    kwargs = dict(
        iterations=iterations, grid=grid, loss=loss, device=torch_device, dtype=torch_dtype
    )
    conditions = pd.DataFrame([condition_report(ds) for ds in datasets])
    frames = []
    for opt_name, settings in optimizers.items():
        settings = without(settings, "label")
        sweeps_lr = settings["rule"] == "ngd"
        if sweeps_lr and "lr" in settings:
            raise ValueError(
                f"optimizer {opt_name}: an ngd optimizer takes its lr from the sweep's lr list"
            )
        specs = (
            {lr: OptimizerSpec(**settings, lr=lr) for lr in lrs}
            if sweeps_lr
            else dict.fromkeys(lrs, OptimizerSpec(**settings))
        )
        done: dict[int, dict[str, np.ndarray]] = {}  # one run per distinct spec
        for lr, spec in specs.items():
            if id(spec) not in done:
                done[id(spec)] = _runs(datasets, W_mm, u_mm, spec, **kwargs)
            step = np.nan if spec.rule == "polyak" else spec.lr
            frames.append(
                pd.DataFrame(
                    {
                        "point": name,
                        **{key: params[key] for key in ("n", "T", "d", "mu_norm", "noise_scale")},
                        "lr": lr,
                        "optimizer": opt_name,
                        "seed": np.arange(seeds),
                        "step_size": step,
                        "iterations": iterations,
                        **done[id(spec)],
                    }
                ).join(conditions)
            )
    return pd.concat(frames, ignore_index=True)
