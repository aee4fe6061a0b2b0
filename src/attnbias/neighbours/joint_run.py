"""AttentionMD's joint run (synthetic-data/joint_training.py): W and v trained together
from 0 on their fixed n = 2, T = 3, d = 2 instance by normalised l_p mirror descent, each
block divided by its own gradient's dual norm; ours (the rule `mirror` with
dual_normalize per_block, its step formed in logs) and theirs restated
(attnbias.neighbours.restated: their 2.2e-16 in the denominator), each measured by the
cosine of W and of v with the l_p SVM directions of the tokens the run ends on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.data import models
from attnbias.neighbours import local_tokens, restated
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm import norms
from attnbias.training import dispatch

OURS, THEIRS = "ours", "theirs"


def our_iterates(data, spec: OptimizerSpec, steps, log_iterations, *, train_u=False):
    """Our full-W run of `spec` on `data` (logistic loss): (W (k, d, d), u (k, d)) at each
    of `log_iterations` (iterations 0 .. steps)."""
    d = data["X"].shape[-1]
    seen = {"W": [], "u": []}

    def capture(W, u):
        seen["W"].append(W[0].copy())
        seen["u"].append(u[0].copy())
        return {}

    dispatch.train(
        [data], spec, W_mm=np.eye(d)[None], u_mm=np.ones((1, d)), iterations=steps,
        log_iterations=np.asarray(log_iterations), train_u=train_u, loss="logistic",
        extra_metrics=capture, nonfinite="raise",
    )  # fmt: skip
    return np.array(seen["W"]), np.array(seen["u"])


def svm_norm(p: float) -> str:
    """The l_p SVM's name in svm.norms (p = 2: the Frobenius norm)."""
    return "fro" if p == 2 else f"l{p:g}"


def log_iterations(epochs: int, points: int) -> np.ndarray:
    """0 and about `points` geometrically spaced iterations up to `epochs` (distinct)."""
    return np.unique(np.r_[0, np.geomspace(1, epochs, points - 1).round().astype(int)])


def _cos(A, B) -> np.ndarray:
    """cos of each A[k] (k, ...) with B."""
    flat = A.reshape(len(A), -1)
    norms_ = np.linalg.norm(flat, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):  # the start W = v = 0: no direction
        return flat @ B.ravel() / (norms_ * np.linalg.norm(B))


def run(settings: dict) -> tuple[pd.DataFrame, dict]:
    """Both runs (settings: p, lr, epochs, log_points). Returns the curves (iteration, run,
    block W|v, cos) and a summary: the tokens each run ends on, and each run's final cos."""
    data = models.generate("attentionmd_joint", 0, {})
    p, lr, epochs = settings["p"], settings["lr"], settings["epochs"]
    logged = log_iterations(epochs, settings["log_points"])
    spec = OptimizerSpec("mirror", lr=lr, p=p, dual_normalize="per_block")
    ours = our_iterates(data, spec, epochs, logged, train_u=True)
    their_W, their_v, their_tokens = restated.their_mirror(data, p, lr, epochs, train_v=True)
    theirs = (their_W[logged], their_v[logged])
    tokens = local_tokens.selected_tokens(data, ours[0][-1])
    norm = svm_norm(p)
    W_svm = norms.solve_w_svm_norm(data["X"], tokens, norm, name="attentionmd_joint").solution
    v_svm = norms.solve_u_svm_norm(
        data["X"], data["y"], tokens, norm, name="attentionmd_joint"
    ).solution
    rows, final = [], {}
    for name, (W, v) in {OURS: ours, THEIRS: theirs}.items():
        for block, iterates, svm in (("W", W, W_svm), ("v", v, v_svm)):
            cos = _cos(iterates, svm)
            rows.append(
                pd.DataFrame({"iteration": logged, "run": name, "block": block, "cos": cos})
            )
            final[f"{name}_{block}"] = float(cos[-1])
    summary = {
        "tokens": tokens.tolist(),
        "their_tokens": np.asarray(their_tokens).tolist(),
        "svm_norm": norm,
        "final_cos": final,
        **{k: settings[k] for k in ("p", "lr", "epochs")},
    }
    return pd.concat(rows, ignore_index=True), summary
