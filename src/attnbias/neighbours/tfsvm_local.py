"""TF-as-SVM's local convergence (local_converge.ipynb): on their cross-attention data
(cross_gaussian, v fixed, logistic loss), W by normalised GD (the rule ngd: the gradient
over its Frobenius norm) from nn.Linear's draw, and (K, Q) by the rule kq with each
factor's gradient over its own norm (dual_normalize per_block), their ridge
eps (||K||^2 + ||Q||^2) and nn.Linear's draw; each run's W (or K Q^T) correlated with the
Frobenius and nuclear W-SVMs of the tokens its last W selects (neighbours.local_tokens),
against t.

Seeds 0, 1, ... as theirs (seed = run): the data of our seed s are theirs of seed s. Their
starts are unseeded; ours are drawn from the run's seed (W: by the data model, after
their data; K, Q: by the rule kq)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.data import models
from attnbias.neighbours import joint_run, local_run, local_tokens, measures
from attnbias.optim.spec import OptimizerSpec

NORMS = ("fro", "nuclear")
# the norm each parametrisation's bias is toward (their paper): its tokens are checked on
# that norm's SVM support (local_tokens.check)
OWN_NORM = {"W": "fro", "KQ": "nuclear"}
RIDGE = float(np.finfo(np.float64).eps)  # their eps = torch.finfo(torch.double).eps


def parametrizations(lr: float) -> dict[str, tuple[str, OptimizerSpec]]:
    """{name: (cross_gaussian's init, the optimizer)}: W's start is the data's W0; K, Q's
    the rule's own (W0 = 0, so W = K0 Q0^T)."""
    return {
        "W": ("linear", OptimizerSpec("ngd", lr=lr)),
        "KQ": ("zero", OptimizerSpec("kq", lr=lr, dual_normalize="per_block", ridge=RIDGE,
                                     init="linear")),
    }  # fmt: skip


def seed_rows(seed: int, settings: dict) -> tuple[list[dict], list[dict]]:
    """One seed's two runs: the correlation curves and one final row per run."""
    logged = joint_run.log_iterations(settings["iterations"], settings["log_points"])
    sizes = {k: settings[k] for k in ("n", "T", "d")}
    curves, finals = [], []
    for name, (init, spec) in parametrizations(settings["lr"]).items():
        data = models.generate("cross_gaussian", seed, {"init": init, **sizes})
        W = joint_run.our_iterates(data, spec, settings["iterations"], logged)[0]
        found, solutions = local_tokens.run_report(
            data, W[-1], NORMS, own=OWN_NORM[name], name=f"tfsvm_local seed {seed}"
        )
        for norm in NORMS:
            S = solutions[norm].solution
            curves += [
                {"seed": seed, "param": name, "norm": norm, "iteration": int(k),
                 "correlation": measures.correlation(Wk, S)}
                for k, Wk in zip(logged, W, strict=True)
            ]  # fmt: skip
        final = measures.svm_correlations(W[-1], {k: v.solution for k, v in solutions.items()})
        finals.append({
            "seed": seed, "param": name, **{f"corr_{k}": v for k, v in final.items()},
            **local_run.token_columns(found),
        })  # fmt: skip
    return curves, finals


def run(settings: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every seed (settings: seeds, n, T, d, lr, iterations, log_points): the curves (seed,
    param, norm, iteration, correlation) and the final table (seed, param, corr_fro, ...)."""
    # local_converge.ipynb: seed = run, 0 .. RUN - 1
    return local_run.over_seeds(seed_rows, range(settings["seeds"]), settings)


def summary(finals: pd.DataFrame) -> dict:
    """{param: {norm: mean final correlation}} and the runs' token counts."""
    means = finals.groupby("param")[[f"corr_{n}" for n in NORMS]].mean()
    return {
        "mean_correlation": {
            param: {n: float(row[f"corr_{n}"]) for n in NORMS} for param, row in means.iterrows()
        },
        **local_run.run_counts(finals),
    }
