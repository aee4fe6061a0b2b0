"""The fig3 sweep's training side: one DM data point, every optimizer and step size.

Fig. 3 of the paper trains W and u jointly on data model DM and orders the optimizers:
GD slowest, PS fastest, NGD slightly ahead of joint NGD in W and u, NGD ~ joint NGD in the
loss. The sweep (attnbias.sweep draws and judges it) asks where that order holds over the
settings that the paper's Condition 1 allows: the separation of the optimal token from the
others (mu_norm, noise_scale), the overparameterisation d / n and the step size.

One data point is (n, T, d, mu_norm, noise_scale). Its seeds are batched into one run per
optimizer: on the compiled CPU kernel (attnbias.fast) with `device` auto or cpu in float64,
else with torch (attnbias.train), as a training job chooses (fast.backend). The optimizers
of rule ngd run once per step size of the sweep, the others once (their step does not
depend on it) and their rows are repeated under every step size, so that every setting
holds all four optimizers.

Apart from attnbias.sweep, which judges and draws without torch (the plotting env).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias import data, fast, svm
from attnbias.spec import OptimizerSpec

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


def _final_columns(metrics: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The table's columns from a training table {name: (B, logged)}: last values, each (B,)."""
    out = {ours: metrics[name][:, -1] for name, ours in FINAL_METRICS.items()}
    return out | {ours: metrics[name][:, -1] for name, ours in CROSSINGS.items()}


def _runs_fast(datasets, W_mm, u_mm, spec, *, iterations, grid, loss) -> dict[str, np.ndarray]:
    """Every seed in one batch on the C kernel; a run whose loss stops being finite gets NaN
    and diverged (fast.train's nonfinite="nan"), the others keep their numbers."""
    metrics, _ = fast.train(
        fast.TokenProblem(datasets),
        spec,
        iterations=iterations,
        log_iterations=grid,
        W_mm=W_mm,
        u_mm=u_mm,
        train_u=True,
        loss=loss,
        nonfinite="nan",
    )
    out = _final_columns(metrics)
    out["diverged"] = np.isnan(metrics["log_loss"]).any(axis=1)
    return out


def _runs_torch(datasets, W_mm, u_mm, spec, *, device, dtype, **kwargs) -> dict[str, np.ndarray]:
    """The same with torch (cuda, float32). train.train raises when a run's loss stops being
    finite, so a batch that does is split, seed by seed."""
    import torch

    from attnbias import train
    from attnbias.attention import Problem

    torch_device, torch_dtype = train.resolve_device(device), getattr(torch, dtype)

    def tensor(values):
        return torch.as_tensor(values, dtype=torch_dtype, device=torch_device)

    def batch(datasets, W_mm, u_mm):
        problem = Problem.from_arrays(datasets, device=torch_device, dtype=torch_dtype)
        try:
            metrics, _ = train.train(
                problem,
                spec,
                iterations=kwargs["iterations"],
                log_iterations=kwargs["grid"],
                W_mm=tensor(W_mm),
                u_mm=tensor(u_mm),
                train_u=True,
                loss=kwargs["loss"],
            )
        except FloatingPointError:
            if len(datasets) == 1:
                nan = np.full(1, np.nan)
                return {**dict.fromkeys(RUN_COLUMNS[:-1], nan), "diverged": np.ones(1, bool)}
            parts = [batch([ds], W_mm[i : i + 1], u_mm[i : i + 1]) for i, ds in enumerate(datasets)]
            return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
        return _final_columns(metrics) | {"diverged": np.zeros(len(datasets), dtype=bool)}

    return batch(datasets, W_mm, u_mm)


def backend_info(device: str, dtype: str) -> dict[str, str]:
    """Where run_point trains, for the provenance: fast.kernel_info or train.device_info."""
    if fast.backend(device, dtype) == "c":
        return fast.kernel_info()
    from attnbias import train

    return train.device_info(train.resolve_device(device))


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
    datasets = [data.generate("dm", seed, params) for seed in range(seeds)]
    solutions = [
        svm.to_arrays(svm.solve_for_dataset(ds, True, name=f"fig3 sweep {name}, seed {seed}"))
        for seed, ds in enumerate(datasets)
    ]
    W_mm = np.stack([s["W_mm"] for s in solutions])
    u_mm = np.stack([s["u_mm"] for s in solutions])
    kwargs = dict(iterations=iterations, grid=fast.log_grid(iterations, log_points), loss=loss)
    if fast.backend(device, dtype) == "c":
        train_batch = _runs_fast
    else:
        kwargs |= dict(device=device, dtype=dtype)
        train_batch = _runs_torch
    conditions = pd.DataFrame([condition_report(ds) for ds in datasets])
    frames = []
    for opt_name, settings in optimizers.items():
        settings = {k: v for k, v in settings.items() if k != "label"}
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
                done[id(spec)] = train_batch(datasets, W_mm, u_mm, spec, **kwargs)
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
