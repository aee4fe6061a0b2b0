"""Is a stored W_mm the max-margin solution of its data? The W-SVM's own check, which every
reader of an svm file runs before it trusts the matrix (attnbias.workflow.svm_file.load_svm)."""

from __future__ import annotations

import numpy as np

from attnbias.model.queries import queries_of, query_rows

# W_mm's smallest margin over its data's constraints is 1 (up to rounding), as is its KKT
# residual's bound in the svm stage's own checks
MARGIN_TOLERANCE = 1e-6
KKT_TOLERANCE = 1e-6


def smallest_margin(X: np.ndarray, opt: np.ndarray, W: np.ndarray, queries=None) -> float:
    """min over samples i and tokens t != opt_i of (x_opt - x_t)^T W z_i, z_i the queries
    (x_{i,1} where None); 1.0 where no constraint exists (T = 1)."""
    n, T, _ = X.shape
    opt = opt.astype(np.int64)
    keep = np.arange(T)[None, :] != opt[:, None]
    scores = np.einsum("ntd,de,ne->nt", X, W, query_rows(X, queries))
    margins = (scores[np.arange(n), opt][:, None] - scores)[keep]
    return float(margins.min()) if margins.size else 1.0


def w_mm_defect(W: np.ndarray, data: dict, kkt_residual: float) -> str | None:
    """Why `W` is not the W-SVM solution of `data` (X, opt[, Z]), in words; None where it is:
    a finite (d, d) matrix whose smallest margin is 1 and whose KKT residual is small."""
    X = data["X"]
    d = X.shape[2]
    if W.shape != (d, d) or not np.all(np.isfinite(W)):
        return f"W_mm (shape {W.shape}) is not a finite (d, d) matrix for its data, d={d}"
    low = smallest_margin(X, data["opt"], W, queries_of(data))
    if abs(low - 1.0) > MARGIN_TOLERANCE or not kkt_residual <= KKT_TOLERANCE:
        return (
            f"W_mm is not the max-margin solution of its data (smallest margin {low:.6g}, "
            f"should be 1; KKT residual {kkt_residual:.3g}, should be <= {KKT_TOLERANCE:g})"
        )
    return None
