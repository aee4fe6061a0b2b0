"""The query of each sample: cross-attention's `Z`, or self-attention's first token.

Token t of sample i scores x_{i,t}^T W z_i. A dataset of the data contract may carry the
queries `Z` (n, d), one per sample apart from its tokens: cross-attention, as Tarzanagh et
al. (arXiv 2308.16898) and Julistiono et al. (arXiv 2410.14581) train it. Without `Z` the
query is the sample's first token, z_i = x_{i,1}: self-attention, the paper's model, and
every computation takes exactly the path it took before `Z` existed. Every place that forms
the query (the model, the token problem and its kernel, the full-W and torch steppers, the
W-SVM constraints in every norm, the geometry measures) reads it through `queries_of` (a
dataset) or `query_rows` (arrays), so cross-attention is a key of the data, not a fork.
"""

from __future__ import annotations

import numpy as np

QUERIES_KEY = "Z"


def queries_of(data: dict):
    """The queries of a dataset of the data contract (or of a batch of them, X (B, n, T, d)
    and Z (B, n, d)): its `Z`, else each sequence's first token X[..., 0, :]."""
    return query_rows(data["X"], data.get(QUERIES_KEY))


def query_rows(X, Z=None):
    """Z where given, else each sequence's first token X[..., 0, :] (numpy or torch)."""
    return X[..., 0, :] if Z is None else Z


def stacked_queries(datasets: list[dict]) -> np.ndarray | None:
    """The queries of a batch of datasets as (B, n, d) float64 where any carries Z (each
    checked; the others' first tokens), else None: a self-attention batch then takes its
    first tokens as views of X, exactly as before Z existed."""
    if not any(QUERIES_KEY in data for data in datasets):
        return None
    for data in datasets:
        check_queries(data, "a dataset of the batch")
    return np.stack([np.asarray(queries_of(data), dtype=np.float64) for data in datasets])


def queries_defect(X, Z) -> str | None:
    """Why `Z` cannot be the queries of the tokens `X` (n, T, d), in words naming the key;
    None where it can: one finite row of d numbers per sample, shape (n, d)."""
    n, _, d = np.shape(X)
    if np.shape(Z) != (n, d):
        return (
            f"its queries {QUERIES_KEY!r} have shape {np.shape(Z)}, but its tokens X "
            f"{np.shape(X)} need one query per sample: shape ({n}, {d})"
        )
    if not np.all(np.isfinite(Z)):
        return f"its queries {QUERIES_KEY!r} hold non-finite values"
    return None


def check_queries(data: dict, where: str) -> None:
    """Refuse a dataset whose `Z` is not (n, d) and finite, naming `where` and the key."""
    if QUERIES_KEY in data:
        defect = queries_defect(data["X"], data[QUERIES_KEY])
        if defect:
            raise ValueError(f"{where}: {defect}")
