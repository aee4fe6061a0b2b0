"""What TF-as-SVM's svm_rank.ipynb would report, measured on our instances: the nuclear
W-SVM solved as theirs is (cvxpy, solver SCS at its default settings) and its rank read
as theirs is (singular values above an absolute 1e-7), beside the exact solution
(svm.norms, KKT-checked) and its rank at 1e-4 sigma_1 (neighbours.ranks).

SCS is a first-order conic solver: its answer meets the constraints only to its tolerance
(the smallest margin a little below 1) and its trailing singular values are its residual
(1e-5 to 1e-7), which an absolute 1e-7 counts as rank. No W-SVM's rank exceeds min(n, d)
(the constraints see W only through W z_i: projecting W's rows onto the queries' span
keeps every margin and raises neither norm), so a rank above it is the solver's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.data import models
from attnbias.neighbours import ranks
from attnbias.svm import local_optimality

THEIR_ABSOLUTE = 1e-7  # svm_rank.ipynb's threshold on the singular values


def scs_nuclear(data: dict, tokens) -> tuple[np.ndarray | None, str]:
    """argmin ||W||_* over the W-SVM constraints of `tokens`, by cvxpy's SCS at its default
    settings (their base.py's W_svm_solver: cp.norm(W, "nuc"), (x_t - x_alpha)^T W z <= -1,
    prob.solve(), whose default for this cone program is SCS): (W, or None where SCS
    returns none, and SCS's status)."""
    import cvxpy as cp

    X = np.asarray(data["X"], float)
    queries = np.asarray(data["Z"], float) if "Z" in data else X[:, 0]
    tokens = np.asarray(tokens, np.int64)
    samples, positions = local_optimality.constraint_index(tokens, X.shape[1])
    diffs = X[samples, tokens[samples]] - X[samples, positions]  # (k, d)
    d = X.shape[-1]
    W = cp.Variable((d, d))
    scores = cp.sum(cp.multiply(-diffs @ W, queries[samples]), axis=1)  # (x_t - x_alpha)^T W z
    problem = cp.Problem(cp.Minimize(cp.norm(W, "nuc")), [scores <= -1])
    problem.solve(solver=cp.SCS)
    return (None if W.value is None else np.asarray(W.value)), str(problem.status)


def their_rank(W) -> int:
    """svm_rank.ipynb's reading: np.linalg.matrix_rank(W, tol=1e-7), W as cvxpy returns it;
    on an infeasible instance cvxpy returns None, whose matrix_rank is 1."""
    return int(np.linalg.matrix_rank(W, tol=THEIR_ABSOLUTE))


def instance_row(seed: int, sizes: dict) -> dict:
    """One instance of their generator (cross_gaussian, seed `seed`, their globally optimal
    tokens): SCS's status, its smallest margin and smallest singular value (NaN where it
    returns no W), their rank reading (their_rank: 1 where no W), and the exact solution's
    rank at 1e-4 sigma_1 (NaN where infeasible)."""
    data = models.generate("cross_gaussian", seed, sizes)
    row = {"seed": seed, **sizes}
    W, status = scs_nuclear(data, data["opt"])
    row.update(scs_status=status, scs_rank=their_rank(W))
    if W is None:
        row.update(scs_min_margin=np.nan, scs_sigma_min=np.nan)
    else:
        sigma = np.linalg.svd(W, compute_uv=False)
        row.update(
            scs_min_margin=float(local_optimality.margins(data, data["opt"], W).min()),
            scs_sigma_min=float(sigma[-1]),
        )
    found = ranks.count_ranks({f"seed {seed}": data}, ("nuclear",))
    row["infeasible"] = bool(found.infeasible)
    row["exact_rank"] = float(found.ranks["nuclear"][0]) if found.feasible else np.nan
    return row


def table(settings: dict) -> pd.DataFrame:
    """Every instance (settings: seeds, and the sizes n, T, d, one entry each or lists
    zipped into cells), one row each."""
    cells = zip(*(np.atleast_1d(settings[k]).tolist() for k in ("n", "T", "d")), strict=True)
    return pd.DataFrame(
        [
            instance_row(seed, {"n": int(n), "T": int(T), "d": int(d)})
            for n, T, d in cells
            for seed in range(settings["seeds"])
        ]
    )
