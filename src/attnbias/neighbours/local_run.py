"""AttentionMD's local-convergence experiment (synthetic-data/bash_scripts, main.py with
--init normal): on cross_gaussian data (n = 6, T = 8, d = 10, v fixed, logistic loss),
W from N(0, 1) trained by normalised l_p mirror descent (the rule `mirror` with
dual_normalize per_block, its step formed in logs) for each p, each run measured by the
directional Bregman divergence (neighbours.measures) against the l_p SVMs of the tokens
it ends on (neighbours.local_tokens), for every (p of the run, p of the SVM) pair.

Seeds 1, 2, ... as theirs: the data of our seed s are theirs of seed s. Their starts are
unseeded (torch's global stream); ours are drawn by the data model from the run's seed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.data import models
from attnbias.neighbours import joint_run, local_tokens, measures
from attnbias.optim.spec import OptimizerSpec


def data_params(settings: dict) -> dict:
    """cross_gaussian's params of the experiment: their sizes, W0 ~ N(0, 1) (their --std 1)."""
    return {"init": "normal", **{k: settings[k] for k in ("n", "T", "d")}}


def _run(data: dict, p: float, lr: float, epochs: int, logged: np.ndarray) -> np.ndarray:
    """W (k, d, d) at each logged iteration of normalised l_p mirror descent on `data`."""
    spec = OptimizerSpec("mirror", lr=lr, p=p, dual_normalize="per_block")
    return joint_run.our_iterates(data, spec, epochs, logged)[0]


def seed_rows(seed: int, settings: dict) -> tuple[list[dict], list[dict]]:
    """One seed's runs (one per p): the divergence curves (to its own p's SVM) and one
    row per (run p, SVM p) with the final divergence, the tokens and their check."""
    data = models.generate("cross_gaussian", seed, data_params(settings))
    ps = [float(p) for p in settings["p"]]
    name = f"attentionmd_local seed {seed}"
    curves, finals = [], []
    for p, epochs in zip(ps, settings["epochs"], strict=True):
        logged = joint_run.log_iterations(int(epochs), settings["log_points"])
        W = _run(data, p, settings["lr"], int(epochs), logged)
        found, solutions = local_tokens.run_report(
            data, W[-1], [joint_run.svm_norm(q) for q in ps], own=joint_run.svm_norm(p), name=name
        )
        own = solutions[joint_run.svm_norm(p)].solution
        curves += [
            {"seed": seed, "p": p, "iteration": int(k),
             "divergence": measures.bregman_divergence(Wk, own, p)}
            for k, Wk in zip(logged[1:], W[1:], strict=True)
        ]  # fmt: skip
        for q in ps:
            S = solutions[joint_run.svm_norm(q)].solution
            finals.append({
                "seed": seed, "p": p, "svm_p": q, "epochs": int(epochs),
                "divergence": measures.bregman_divergence(W[-1], S, p),
                **token_columns(found),
            })  # fmt: skip
    return curves, finals


def token_columns(found: local_tokens.TokenCheck) -> dict:
    """A run's tokens (1-based) and their check, as columns of its final row."""
    return {
        "globally_optimal": found.globally_optimal,
        "locally_optimal": found.locally_optimal,
        "check": found.verdict(),
        "tokens": " ".join(str(t + 1) for t in found.tokens),
    }


def over_seeds(seed_rows, seeds, settings: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(curves, finals) of seed_rows(seed, settings) for each seed, concatenated."""
    curves, finals = [], []
    for seed in seeds:
        c, f = seed_rows(seed, settings)
        curves += c
        finals += f
    return pd.DataFrame(curves), pd.DataFrame(finals)


def run_counts(runs: pd.DataFrame) -> dict:
    """The runs (one row each), those off argmax y v^T x, those failing the check, seeds."""
    return {
        "runs": len(runs),
        "not_globally_optimal": int((~runs["globally_optimal"]).sum()),
        "not_locally_optimal": int((~runs["locally_optimal"]).sum()),
        "seeds": int(runs["seed"].nunique()),
    }


def run(settings: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every seed (settings: seeds, n, T, d, p, epochs (one per p), lr, log_points): the
    curves (seed, p, iteration, divergence) and the final table (seed, p, svm_p, ...)."""
    if len(settings["epochs"]) != len(settings["p"]):
        raise ValueError("neighbours.attentionmd_local: give one epochs entry per p")
    # their bash_scripts' seeds 1..100
    return over_seeds(seed_rows, range(1, settings["seeds"] + 1), settings)


def summary(finals: pd.DataFrame) -> dict:
    """The mean 3 x 3 table {run p: {svm p: mean divergence}} and the runs' token counts."""
    table = finals.pivot_table(index="p", columns="svm_p", values="divergence", aggfunc="mean")
    return {
        "mean_divergence": {
            str(p): {str(q): float(v) for q, v in row.items()} for p, row in table.iterrows()
        },
        **run_counts(finals.drop_duplicates(["seed", "p"])),
    }
