"""A sweep's tables: its points' runs, each claim judged per point, and the tally.

The runs of every point (attnbias.studies.sweep_runs: one row per optimizer x seed, with the
sweep's metrics) are judged point by point: per metric, the seed summary is the mean or
the median over seeds (as the metric says, attnbias.studies.sweep_metrics); each claim
(attnbias.studies.sweep_claims) holds or not on that summary, and counts the seeds on which it
holds on their own numbers. The tally says, per claim, "holds in k of N settings".

No torch here: this module runs in the plotting env.
"""

from __future__ import annotations

import pandas as pd

from attnbias.studies import sweep_claims, sweep_metrics


def point_numbers(runs: pd.DataFrame, curves: pd.DataFrame, metrics: list[str]):
    """sweep_claims.Point of one point's runs (one row per optimizer x seed)."""
    optimizers = list(dict.fromkeys(runs["optimizer"]))
    per_seed = runs.pivot(index="seed", columns="optimizer", values=metrics)
    per_seed = per_seed.reindex(columns=pd.MultiIndex.from_product([metrics, optimizers]))
    registry = sweep_metrics.registry()
    summary = pd.DataFrame(
        {
            (m, o): [getattr(per_seed[(m, o)], registry[m].aggregate)()]
            for m in metrics
            for o in optimizers
        }
    )
    summary.columns = pd.MultiIndex.from_tuples(summary.columns)
    return sweep_claims.Point(per_seed, summary, curves)


def judge_points(
    runs: pd.DataFrame, curves: pd.DataFrame, metrics: list[str], claims: dict[str, dict]
) -> pd.DataFrame:
    """One row per point (in the runs' order): each claim (True/False), `<claim>_seeds`,
    `seeds`, and the seed summaries `<metric>_<optimizer>`."""
    rows = []
    for point, point_runs in runs.groupby("point", sort=False):
        numbers = point_numbers(point_runs, curves[curves["point"] == point], metrics)
        row = {"point": point}
        for name, spec in claims.items():
            row[name], row[f"{name}_seeds"] = sweep_claims.judge(numbers, spec)
        row["seeds"] = numbers.per_seed.shape[0]
        for (m, o), value in numbers.summary.iloc[0].items():
            row[f"{m}_{o}"] = value
        rows.append(row)
    columns = ["point", *claims, *(f"{c}_seeds" for c in claims), "seeds"]
    table = pd.DataFrame(rows)
    return table[columns + [c for c in table.columns if c not in columns]]


def tally(points: pd.DataFrame, claims: dict[str, dict]) -> pd.DataFrame:
    """Per claim: its sentence and in how many of the points it holds."""
    held = [int(points[name].sum()) for name in claims]
    settings = len(points)
    return pd.DataFrame(
        {
            "claim": list(claims),
            "text": [sweep_claims.describe(spec) for spec in claims.values()],
            "holds": held,
            "settings": settings,
            "verdict": [f"holds in {k} of {settings} settings" for k in held],
        }
    )


def tables(
    runs: pd.DataFrame,
    curves: pd.DataFrame,
    grid_values: pd.DataFrame,
    metrics: list[str],
    claims: dict[str, dict],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(long, points, verdicts): the runs with their point's grid values and claims (one
    row per point x optimizer x seed), the points' judgements led by their grid values,
    and the tally. grid_values: one row per point, `point` and a column per grid key."""
    points = grid_values.merge(judge_points(runs, curves, metrics, claims), on="point")
    long = grid_values.merge(runs, on="point").merge(
        points[["point", *claims]], on="point", how="left"
    )
    return long, points, tally(points, claims)
