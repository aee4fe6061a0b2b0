"""Fixture tables of the neighbours' experiments, in the columns their jobs write
(results/tfsvm_*.csv, attentionmd_*.csv), on which every entry of claims.neighbours holds;
`control(key)` changes them so that entry's rows read "does not hold"."""

from __future__ import annotations

import numpy as np
import pandas as pd

SEEDS = (1, 2, 3)
PS = (1.75, 2.0, 3.0)


def tfsvm_local() -> pd.DataFrame:
    rows = []
    for seed in SEEDS:
        rows.append({"seed": seed, "param": "W", "corr_fro": 0.998, "corr_nuclear": 0.85})
        rows.append({"seed": seed, "param": "KQ", "corr_fro": 0.85, "corr_nuclear": 0.997})
    table = pd.DataFrame(rows)
    return table.assign(globally_optimal=True, locally_optimal=True, check="", tokens="1 1")


def tfsvm_rank() -> pd.DataFrame:
    cell = {"T": 5, "instances": 5, "infeasible": 0}
    return pd.DataFrame([
        {"n": 5, "d": 10, **cell, "mean_fro": 5.0, "min_fro": 5, "max_fro": 5,
         "mean_nuclear": 2.4, "min_nuclear": 2, "max_nuclear": 3},
        {"n": 10, "d": 4, **cell, "mean_fro": 4.0, "min_fro": 4, "max_fro": 4,
         "mean_nuclear": 3.2, "min_nuclear": 3, "max_nuclear": 4},
    ])  # fmt: skip


def tfsvm_scs() -> pd.DataFrame:
    return pd.DataFrame({
        "seed": [0, 1], "n": 6, "T": 8, "d": 10, "scs_status": "optimal",
        "scs_min_margin": [0.9999999, 1.0], "scs_sigma_min": 1e-15, "scs_rank": [3.0, 2.0],
        "infeasible": False, "exact_rank": [3.0, 2.0],
    })  # fmt: skip


def attentionmd_local() -> pd.DataFrame:
    rows = [
        {"seed": s, "p": p, "svm_p": q, "epochs": 1000, "divergence": 1e-3 if p == q else 1e-2}
        for s in SEEDS
        for p in PS
        for q in PS
    ]
    return pd.DataFrame(rows).assign(globally_optimal=True, locally_optimal=True)


def attentionmd_local_curves() -> pd.DataFrame:
    iterations = np.array([0, 1, 10, 100, 1000])
    rows = [
        {"seed": s, "p": p, "iteration": int(t), "divergence": 0.5 / (1 + t)}
        for s in SEEDS
        for p in PS
        for t in iterations
    ]
    return pd.DataFrame(rows)


def attentionmd_joint(theirs_stall: bool = False) -> pd.DataFrame:
    iterations = np.array([1, 20, 200, 2000])
    rows = []
    for run in ("ours", "theirs"):
        for block in ("W", "v"):
            gap = 1e-2 / iterations
            if run == "theirs" and theirs_stall:
                gap = np.maximum(gap, 4e-3)  # flat from t = 20 on
            rows += [{"iteration": int(t), "run": run, "block": block, "cos": 1 - g}
                     for t, g in zip(iterations, gap, strict=True)]  # fmt: skip
    return pd.DataFrame(rows)


def tables() -> dict:
    return {
        "tfsvm_local": tfsvm_local(),
        "tfsvm_rank": tfsvm_rank(),
        "tfsvm_scs": tfsvm_scs(),
        "attentionmd_local": attentionmd_local(),
        "attentionmd_local_curves": attentionmd_local_curves(),
        "attentionmd_joint": attentionmd_joint(),
    }


def _set(frame, where, column, value):
    frame = frame.copy()
    frame.loc[where(frame), column] = value
    return frame


def control(key: str) -> dict:
    """The fixture tables changed so that entry `key`'s rows read "does not hold"."""
    t = tables()
    local, md = t["tfsvm_local"], t["attentionmd_local"]
    if key == "tfsvm-gd-w":  # W short of the Frobenius SVM on one seed
        t["tfsvm_local"] = _set(local, lambda f: (f.param == "W") & (f.seed == 2), "corr_fro", 0.95)
    elif key == "tfsvm-kq-nuclear":
        t["tfsvm_local"] = _set(local, lambda f: f.param == "KQ", "corr_nuclear", 0.98)
    elif key == "tfsvm-fig-local":  # seed 3: each nearer the other norm's SVM
        seed3 = local.seed == 3
        local.loc[seed3, ["corr_fro", "corr_nuclear"]] = local.loc[
            seed3, ["corr_nuclear", "corr_fro"]
        ].to_numpy()
    elif key == "tfsvm-rank":  # a cell where the nuclear SVM's rank is not lower
        t["tfsvm_rank"] = _set(t["tfsvm_rank"], lambda f: f.d == 4, "mean_nuclear", 4.0)
    elif key == "tfsvm-rank-bound":  # a rank above min(n, d)
        t["tfsvm_rank"] = _set(t["tfsvm_rank"], lambda f: f.d == 4, "max_fro", 5)
    elif key == "tfsvm-defect-scs":  # SCS's trailing singular values counted as rank
        t["tfsvm_scs"] = _set(t["tfsvm_scs"], lambda f: f.seed == 1, "scs_rank", 8.0)
    elif key == "tfsvm-defect-infeasible":
        t["tfsvm_rank"] = _set(t["tfsvm_rank"], lambda f: f.d == 4, "infeasible", 2)
    elif key == "amd-lp":  # the divergence rises over the last decade
        curves = t["attentionmd_local_curves"]
        t["attentionmd_local_curves"] = _set(
            curves, lambda f: (f.iteration == 1000) & (f.p == 3.0), "divergence", 0.2
        )
    elif key == "amd-own-p":  # p = 2's W nearer the l_3 SVM on one seed
        t["attentionmd_local"] = _set(
            md, lambda f: (f.seed == 2) & (f.p == 2.0) & (f.svm_p == 3.0), "divergence", 1e-4
        )
    elif key == "amd-joint":  # ours short of the direction
        joint = t["attentionmd_joint"]
        t["attentionmd_joint"] = _set(
            joint, lambda f: (f.run == "ours") & (f.iteration == 2000), "cos", 0.95
        )
    elif key == "amd-defect-eps":  # their step stalls
        t["attentionmd_joint"] = attentionmd_joint(theirs_stall=True)
    else:
        raise KeyError(key)
    return t
