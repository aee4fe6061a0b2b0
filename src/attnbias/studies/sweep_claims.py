"""The claims a sweep judges at every point: "A ahead of B in M", "A fastest", ...

A claim of a sweep entry is `{claim: <kind>, <its arguments>}`, e.g.
`{claim: ahead, a: ngd, b: joint-ngd, metric: final_log10_gap_W}`. A kind is a function
registered with `@claim`, whose keyword arguments are the entry's arguments (configcheck
checks them against its signature, and optimizer and metric names against the base
experiment and attnbias.studies.sweep_metrics). It gets the point (`Point`) and returns
(holds, seeds): whether the claim holds at the point, and on how many seeds it holds on
that seed's own numbers.

Most kinds compare metric values, lower being faster (sweep_metrics): `@compare` turns a
function of a table of rows (one row per seed, or the seed summary) into such a claim,
judged on the point's seed summary (mean or median per metric) and counted per seed.
A comparison with a NaN (a diverged run) does not hold. Adding a kind is one function and
its decorator line; `text` is its sentence, filled in from the arguments.

numpy, pandas and the claims table's measuring layer (attnbias.claims.measure), so that a
sweep judges "ahead" as the table does (configcheck reads the kinds while the workflow parses).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from attnbias.claims import measure


@dataclass(frozen=True)
class Point:
    """One point's numbers: per_seed has one row per seed and columns (metric, optimizer);
    summary is its seed summary (one row); curves: optimizer, seed, t, and the logged series
    (gap_W, gap_u, log_loss)."""

    per_seed: pd.DataFrame
    summary: pd.DataFrame
    curves: pd.DataFrame


@dataclass(frozen=True)
class Claim:
    kind: str
    text: str
    fn: Callable[..., tuple[bool, int]]

    def arguments(self) -> list[str]:
        return list(inspect.signature(self.fn).parameters)[1:]

    def describe(self, args: dict) -> str:
        return self.text.format(**args)


CLAIMS: dict[str, Claim] = {}
# argument names whose values are optimizers of the base experiment / metric names
OPTIMIZER_ARGUMENTS = ("a", "b", "optimizer")
METRIC_ARGUMENTS = ("metric",)


def claim(kind: str, text: str):
    """Register `fn(point: Point, **args) -> (holds, seeds)` as claim kind `kind`."""

    def register(fn):
        if kind in CLAIMS:
            raise ValueError(f"claim {kind} is registered twice")
        CLAIMS[kind] = Claim(kind, text, fn)
        return fn

    return register


def compare(kind: str, text: str):
    """Register `fn(rows, **args) -> bool per row` (rows: columns (metric, optimizer)) as a
    claim judged on the seed summary, with the seeds on which it holds counted."""

    def register(fn):
        def judged(point: Point, **args) -> tuple[bool, int]:
            holds = bool(np.asarray(fn(point.summary, **args))[0])
            return holds, int(np.asarray(fn(point.per_seed, **args)).sum())

        judged.__signature__ = inspect.signature(fn)
        claim(kind, text)(judged)
        return fn

    return register


def judge(point: Point, spec: dict) -> tuple[bool, int]:
    """One claim of a sweep entry (`{claim: kind, **args}`) at one point."""
    args = {k: v for k, v in spec.items() if k != "claim"}
    return CLAIMS[spec["claim"]].fn(point, **args)


def describe(spec: dict) -> str:
    return CLAIMS[spec["claim"]].describe({k: v for k, v in spec.items() if k != "claim"})


def _others(rows: pd.DataFrame, metric: str, optimizer: str) -> pd.DataFrame:
    values = rows[metric]
    return values[[o for o in values.columns if o != optimizer]]


@compare("ahead", "{a} ahead of {b} in {metric}")
def _ahead(rows, a, b, metric):
    return rows[(metric, a)].lt(rows[(metric, b)]).to_numpy()


@compare("fastest", "{optimizer} fastest in {metric}")
def _fastest(rows, optimizer, metric):
    rest = _others(rows, metric, optimizer)
    valid = rest.notna().all(axis=1) & rows[(metric, optimizer)].notna()
    return (valid & rows[(metric, optimizer)].lt(rest.min(axis=1))).to_numpy()


@compare("slowest", "{optimizer} slowest in {metric}")
def _slowest(rows, optimizer, metric):
    rest = _others(rows, metric, optimizer)
    valid = rest.notna().all(axis=1) & rows[(metric, optimizer)].notna()
    return (valid & rows[(metric, optimizer)].gt(rest.max(axis=1))).to_numpy()


@compare("close", "{a} ~ {b} in {metric} (within a factor {factor:g})")
def _close(rows, a, b, metric, factor):
    first, second = rows[(metric, a)].abs(), rows[(metric, b)].abs()
    return (np.maximum(first, second) / np.minimum(first, second)).le(factor).to_numpy()


@compare("reaches", "{optimizer} reaches {metric} <= {threshold:g}")
def _reaches(rows, optimizer, metric, threshold):
    return rows[(metric, optimizer)].le(threshold).to_numpy()


@claim("below_throughout", "{a} below {b} in {series} at every logged t >= {burn_in} (all seeds)")
def _below_throughout(point: Point, a, b, series, burn_in):
    """A's logged `series` (gap_W, gap_u, log_loss) below B's at every logged t >= burn_in,
    on every seed (holds) and per seed (seeds): the claims table's race
    (measure.below_throughout)."""
    later = point.curves[point.curves["t"] >= burn_in]
    wide = {o: later[later["optimizer"] == o].pivot(index="t", columns="seed", values=series)
            for o in (a, b)}  # fmt: skip
    below = measure.below_throughout(wide[a], wide[b])
    seeds = int(below.sum())
    return seeds == point.per_seed.shape[0] and seeds > 0, seeds
