"""Global-convergence study: how often does the direction of W_t reach W_mm?

The paper argues (Sec. 3, App. C.1) that under Assumptions 1 and 2 GD, NGD and the Polyak
step converge in direction to W_mm from any initialisation, but shows it for a few starts
only. This module measures it: over many random initial directions and scales it records
the fraction of runs whose gap 1 - cos(W_t, W_mm) falls below a threshold within a budget
of iterations, and how that fraction changes as the data leave the assumptions:

  correlation   tokens share a random component orthogonal to u: the scores are unchanged
                but the tokens are less orthogonal (Assumption 1 weakened);
  score_spread  non-optimal tokens get unequal extra scores (Assumption 2 broken).

The data-side quantities of both assumptions (models.assumption_report, and knob_report for
the parts of them that the knobs move) are recorded next to the results, so that a reader
sees how far each setting is from the assumptions. Each run also records how it ended
(global_outcomes: reached, undecided at this horizon, left float64's range, or failed) and
why it may have missed: the gap of the part of W the model sees (effective_gap), and the
softmax left on the optimal tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from attnbias.data import hypotheses, models
from attnbias.data.models import perturbed_example1
from attnbias.optim.spec import OptimizerSpec, without
from attnbias.studies import global_outcomes
from attnbias.svm import max_margin
from attnbias.training import dispatch
from attnbias.training.metrics import log_grid

RUN_COLUMNS = [
    "run",
    "scale",
    "final_gap",
    "reached",
    "first_iteration",
    "outcome",
    "late_slope",
    "final_effective_gap",
    "final_opt_softmax",
]
TABLE_COLUMNS = ["setting", "correlation", "score_spread", "optimizer", *RUN_COLUMNS]
KNOBS = ("correlation", "score_spread")
KNOB_DEFAULTS = models.keyword_defaults(perturbed_example1)


def knob_report(dataset: dict[str, np.ndarray]) -> dict[str, float]:
    """The two quantities that the knobs move, which models.assumption_report mixes with others.

    models.assumption_report's Assumption-1 quantity is dominated by the signal along u (optimal
    tokens of different sequences are nearly parallel), and its Assumption-2 spread includes
    the query, whose score differs by construction: both are large for plain Example 1. Here:
    max_offdiag_inner_orth_u, the largest |<x, x'>| between distinct tokens after removing
    their components along u (what `correlation` raises), and max_noise_score_spread, the
    largest score spread among the tokens that are neither optimal nor the query (0 for plain
    Example 1, what `score_spread` raises).
    """
    X, u = dataset["X"], dataset["u"]
    tokens = X.reshape(-1, X.shape[-1])
    tokens = tokens - np.outer(tokens @ u / (u @ u), u)
    gram = tokens @ tokens.T
    np.fill_diagonal(gram, 0.0)
    gamma = models.token_scores(X, dataset["y"], u)
    noise = np.arange(X.shape[1])[None, :] != dataset["opt"][:, None]
    noise[:, 0] = False
    high = np.where(noise, gamma, -np.inf).max(axis=1)
    low = np.where(noise, gamma, np.inf).min(axis=1)
    spread = np.where(noise.any(axis=1), high - low, 0.0)  # 0 without noise tokens (T = 2)
    return {
        "max_offdiag_inner_orth_u": float(np.abs(gram).max()),
        "max_noise_score_spread": float(spread.max()),
    }


def random_initialisations(
    rng: np.random.Generator, d: int, count: int, scales: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """`count` initial W0 = scale * G / ||G||_F, G Gaussian: uniformly random directions.

    The scales cycle through `scales` (run k has scales[k % len(scales)]), so every scale
    gets about the same number of directions. Returns W0s (count, d, d) and their scales.
    """
    if count < 1 or len(scales) == 0:
        raise ValueError(f"need count >= 1 and at least one scale; got {count}, {scales}")
    run_scales = np.asarray(scales, dtype=float)[np.arange(count) % len(scales)]
    G = rng.standard_normal((count, d, d))
    W0s = run_scales[:, None, None] * G / np.linalg.norm(G, axis=(1, 2), keepdims=True)
    return W0s, run_scales


def effective_gap(W: np.ndarray, W_mm: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """1 - cos(W P, W_mm), with P the projection onto the span of the query tokens.

    The model sees W only through W x_{i,1}, i.e. through W P, and every gradient lies in
    that span (attention.Problem), so the part W0 (I - P) of a random start never changes and
    keeps gap_W away from 0 until ||W_t|| outgrows ||W0||. The effective gap ignores that
    inert part: it measures whether the directions the model uses have reached W_mm (which
    lies in the span: W_mm P = W_mm). W (B, d, d), queries (n, d); returns (B,).
    """
    P = np.linalg.pinv(queries) @ queries
    WP = (W @ P).reshape(len(W), -1)
    unit = WP / np.linalg.norm(WP, axis=1, keepdims=True)
    unit_mm = W_mm.ravel() / np.linalg.norm(W_mm)
    return 0.5 * ((unit - unit_mm) ** 2).sum(axis=1)


def run_setting(
    dataset: dict[str, np.ndarray],
    W0s: np.ndarray,
    spec: OptimizerSpec,
    *,
    iterations: int,
    threshold: float,
    log_points: int = 200,
    device: str = "cpu",
    threads: int | None = None,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Train one dataset from every W0 in one batched run; did each run reach W_mm?

    The B = len(W0s) runs share the data and differ only in W0. gap_W = 1 - cos(W_t, W_mm)
    is read on a log grid of iterations, so `first_iteration` is the first logged
    iteration with gap_W < threshold (NaN if none): an upper bound on the true first one.
    Returns one row per run: run, scale (||W0||_F), final_gap, reached, first_iteration,
    and, to tell why a run has not reached: outcome and late_slope (global_outcomes.classify:
    reached, undecided while the gap still falls at least like 1/ln t, left float64's
    range, or failed), final_effective_gap (see effective_gap: small while final_gap is not,
    the run is right but W0's inert part still weighs) and final_opt_softmax (the mean
    softmax of the optimal tokens at the end: well below 1, the run selected other tokens).
    A run whose values stop being finite (an uncapped Polyak step from a large start: its
    iterate's norm outgrows float64, docs/studies.md) gets NaN; the others keep theirs
    (dispatch.train). Also returns the backend record (dispatch.record).
    """
    W_mm = max_margin.solve_w_svm(dataset["X"], dataset["opt"], name="study setting").W
    grid = log_grid(iterations, log_points)
    logged, final, record = dispatch.train(
        [dataset], spec, W0s=W0s, W_mm=W_mm[None], iterations=iterations, log_iterations=grid,
        only="study", device=device, threads=threads,
    )  # fmt: skip
    gaps = logged["gap_W"]  # (B, len(grid))
    below = gaps < threshold  # False on NaN
    reached = below.any(axis=1)
    outcome, late_slope = global_outcomes.classify(grid, gaps, threshold)
    table = pd.DataFrame(
        {
            "run": np.arange(len(W0s)),
            "scale": np.linalg.norm(W0s, axis=(1, 2)),
            "final_gap": gaps[:, -1],
            "reached": reached,
            "first_iteration": np.where(reached, grid[below.argmax(axis=1)], np.nan),
            "outcome": outcome,
            "late_slope": late_slope,
            "final_effective_gap": effective_gap(final["W"], W_mm, dataset["X"][:, 0]),
            "final_opt_softmax": logged["opt_softmax"][:, -1],
        }
    )
    return table, record


def study_table(
    settings: Sequence[dict],
    specs: dict[str, OptimizerSpec],
    *,
    inits: int,
    scales: Sequence[float],
    iterations: int,
    threshold: float,
    seed: int,
    log_points: int = 200,
    device: str = "cpu",
    threads: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """Every (setting, optimizer, initialisation): the long table, the assumption table and
    where the runs trained.

    settings: dicts of perturbed_example1 parameters plus a `name`. specs: name -> its
    OptimizerSpec (optim.spec.resolve, by the caller). Each setting draws its dataset from
    default_rng([seed, 0]) and its initialisations from default_rng([seed, 1]); since the
    knobs draw after models.example1, settings of equal sizes share the base dataset and the
    initial directions, so their differences come from the knobs alone (paired design).
    Returns (runs: one row per setting, optimizer and run, with TABLE_COLUMNS;
    assumptions: one row per setting, its name, knobs, models.assumption_report and
    knob_report; the backend record that the study job's file stores, dispatch.merged_record).
    """
    names = [s["name"] for s in settings]
    if len(set(names)) != len(names):
        raise ValueError(f"setting names must be unique; got {names}")
    runs, reports, records = [], [], []
    for setting in settings:
        params = without(setting, "name")
        knobs = {k: float(params.get(k, KNOB_DEFAULTS[k])) for k in KNOBS}
        dataset = perturbed_example1(np.random.default_rng([seed, 0]), **params)
        reports.append(
            {
                "setting": setting["name"],
                **knobs,
                **models.assumption_report(dataset),
                **knob_report(dataset),
                **hypotheses.report(dataset),
            }
        )
        W0s, run_scales = random_initialisations(
            np.random.default_rng([seed, 1]), params["d"], inits, scales
        )
        for opt_name, spec in specs.items():
            result, record = run_setting(
                dataset,
                W0s,
                spec,
                iterations=iterations,
                threshold=threshold,
                log_points=log_points,
                device=device,
                threads=threads,
            )
            records.append(record)
            # the nominal scale, not ||W0||_F with its rounding, so that runs group by scale
            result["scale"] = run_scales
            runs.append(result.assign(setting=setting["name"], optimizer=opt_name, **knobs))
    table = pd.concat(runs, ignore_index=True)[TABLE_COLUMNS]
    return table, pd.DataFrame(reports), dispatch.merged_record(records)
