"""The W-SVM of chosen tokens in any norm, for self- or cross-attention data.

The constraints of cross-attention are (x_{i,alpha_i} - x_{i,t})^T W z_i >= 1, with the
queries z_i the dataset's `Z` (n, d). svm.norms states them with the query x_{i,1}, so a
cross-attention problem is handed to it as the self-attention problem with the same
constraints (as_self_attention): sample i's tokens become z_i (first: the query, and the
token selected) and z_i - x_{i,alpha_i} + x_{i,t} for each t != alpha_i, whose differences
with the first are x_{i,alpha_i} - x_{i,t} again. The constraints, their order and the
solution are the same; only a rounding of the token sums (1e-16 relative) comes between.
"""

from __future__ import annotations

import numpy as np

from attnbias.svm import norms


def as_self_attention(X: np.ndarray, Z: np.ndarray, tokens: np.ndarray):
    """(X', tokens') whose self-attention W-SVM constraints are the cross-attention ones of
    (X, Z, tokens), in the same order (see the module doc)."""
    X, Z, tokens = np.asarray(X, float), np.asarray(Z, float), np.asarray(tokens, np.int64)
    n, T, d = X.shape
    if Z.shape != (n, d):
        raise ValueError(f"the queries Z must have shape (n, d) = ({n}, {d}), got {Z.shape}")
    rows = np.arange(n)
    others = np.arange(T)[None, :] != tokens[:, None]  # (n, T): t != alpha_i, in order
    moved = Z[:, None, :] - X[rows, tokens][:, None, :] + X  # z_i - x_{i,alpha_i} + x_{i,t}
    shifted = moved[others].reshape(n, T - 1, d)
    return np.concatenate([Z[:, None, :], shifted], axis=1), np.zeros(n, dtype=np.int64)


def w_svm(data: dict, tokens, norm: str, *, name: str = "dataset") -> norms.NormSVMSolution:
    """argmin ||W|| over the W-SVM constraints of `tokens` (one per sample) in `norm`, with
    the queries `Z` where the data carry them (else x_{i,1}); checked against KKT by
    svm.norms, InfeasibleSVMError naming `name` where no W meets the constraints."""
    X, tokens = np.asarray(data["X"], float), np.asarray(tokens, np.int64)
    if tokens.shape != (X.shape[0],) or np.any((tokens < 0) | (tokens >= X.shape[1])):
        raise ValueError(f"{name}: need one token index in [0, {X.shape[1]}) per sample")
    if "Z" in data:
        X, tokens = as_self_attention(X, data["Z"], tokens)
    return norms.solve_w_svm_norm(X, tokens, norm, name=name)
