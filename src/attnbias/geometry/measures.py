"""The measures of a geometry run, logged beside the training metrics (SPEC, "Beyond the
paper"): for each norm N of the experiment, with W*_N the attention SVM's solution in N,

  align_N         <W_t, W*_N> / (||W_t||_F ||W*_N||_F): the Frobenius alignment (1: same
                  direction)
  margin_N        min_{i, t != opt_i} (x_{i,opt_i} - x_{i,t})^T W_t x_{i,1} / ||W_t||_N: the
                  normalized margin in N; its largest value over all W is 1 / ||W*_N||_N
  margin_ratio_N  margin_N * ||W*_N||_N: that margin as a fraction of its optimum (1 at W*_N)

At W = 0 (the start of a run from W0 = 0) every measure is 0: no direction, no margin.
The training backends call `extra_metrics(W, u)` at every logged iteration with the batch's
parameters (W: (B, d, d), one run per seed); each measure comes back as (B,) values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attnbias.geometry.metric_names import metric_name
from attnbias.svm.max_margin import w_svm_constraints
from attnbias.svm.norm_values import norm_value, parse_norm


def ratio(numerator, denominator) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (W = 0)."""
    numerator, denominator = np.asarray(numerator, float), np.asarray(denominator, float)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    return np.divide(numerator, denominator, out=out, where=denominator != 0)


def alignment(W: np.ndarray, W_star: np.ndarray) -> np.ndarray:
    """<W_b, W*_b> / (||W_b||_F ||W*_b||_F) for each run b of (B, d, d) batches."""
    inner = np.einsum("bij,bij->b", W, W_star)
    return ratio(inner, np.linalg.norm(W, axis=(1, 2)) * np.linalg.norm(W_star, axis=(1, 2)))


def smallest_constraint(W: np.ndarray, X: np.ndarray, opt: np.ndarray) -> float:
    """min over i and t != opt_i of (x_{i,opt_i} - x_{i,t})^T W x_{i,1} (one run's W)."""
    a, b = w_svm_constraints(X, opt)
    return float(np.einsum("kd,de,ke->k", a, W, b).min())


def normalized_margins(W: np.ndarray, datasets: list[dict], norm: str) -> np.ndarray:
    """Each run's smallest constraint value over its ||W||_norm: (B,)."""
    parsed = parse_norm(norm)
    runs = list(zip(W, datasets, strict=True))
    smallest = [smallest_constraint(W_b, data["X"], data["opt"]) for W_b, data in runs]
    return ratio(smallest, [norm_value(W_b, parsed) for W_b, _ in runs])


def extra_metrics(
    datasets: list[dict], solutions: list[dict[str, np.ndarray]], norms: list[str]
) -> Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]]:
    """The measures of a batch of runs as the backends' extra_metrics hook.

    datasets: each run's data (X, opt); solutions: each run's {norm: W*_norm}; norms: the
    experiment's norm names (attnbias.svm.norms)."""
    stars = {norm: np.stack([s[norm] for s in solutions]) for norm in norms}
    optima = {
        norm: np.array([norm_value(W_star, parse_norm(norm)) for W_star in stars[norm]])
        for norm in norms
    }

    def measure(W: np.ndarray, u: np.ndarray) -> dict[str, np.ndarray]:
        W = np.asarray(W, dtype=float)
        out = {}
        for norm in norms:
            margin = normalized_margins(W, datasets, norm)
            out[metric_name("align", norm)] = alignment(W, stars[norm])
            out[metric_name("margin", norm)] = margin
            out[metric_name("margin_ratio", norm)] = margin * optima[norm]
        return out

    return measure
