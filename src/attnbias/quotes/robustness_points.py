"""The docs' numbers and verdicts from the robustness target's points (an optional target,
results/claims_robustness.md): each constant's file results/claims_robustness/<constant>.parquet
holds one row per claims row and value tried (attnbias.studies.robustness_points.COLUMNS).
A row's outcome at some values, its measured range, on how many seeds it gives an outcome
alone, a margin row's earlier values (its value_text, as attnbias.claims.beyond words it),
the values tried, and the cost of the constants' jobs (their Snakemake benchmark files).
Where the build lacks the target, each reads "not built here"."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from attnbias.claims.robustness import Constant
from attnbias.quotes.build import ROBUSTNESS, Build, Unbuilt
from attnbias.quotes.numbers import NUMBER, value_of
from attnbias.quotes.quote import Source


def same(a, b) -> np.ndarray:
    """Equal values tried, relatively (an eps of 1e-12 is not 1e-8)."""
    return np.isclose(a, b, rtol=1e-9, atol=0)


def _values(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


def points(b: Build, constant: str, key: str, *values: float) -> pd.DataFrame:
    """The claims row `key`'s points of `constant`, by value (ascending): at `values` only
    where given (each must have been tried)."""
    table = b.robustness_points(constant)
    rows = table[table["key"] == key].sort_values("value")
    if rows.empty:
        raise ValueError(f"the robustness points of {constant} lack the row {key!r}")
    if not values:
        return rows
    chosen = same(rows["value"].to_numpy()[:, None], np.array(values)[None, :])
    missing = [v for v, found in zip(values, chosen.any(axis=0), strict=True) if not found]
    if missing:
        raise ValueError(f"the robustness points of {constant} lack {key!r} at {missing}")
    return rows[chosen.any(axis=1)]


def measured(constant: str, key: str, *values: float, sign: float = 1) -> Source:
    """The row's measured range over seeds (its low and high) at `values`, all together;
    `sign` -1: the values negated (a negative lead read as "closer by")."""

    def read(b: Build) -> np.ndarray:
        rows = points(b, constant, key, *values)
        return sign * rows[["low", "high"]].to_numpy(dtype=float).ravel()

    what = f"claims_robustness: row {key!r} at {constant} = {_values(values)}, its range"
    return Source(what + (" negated" if sign < 0 else ""), read, ROBUSTNESS)


def seeds(constant: str, key: str, *values: float, alone: bool = True) -> Source:
    """At `values`, on how many seeds alone the row gives its outcome there (seeds_alike:
    NaN where it was not judged seed by seed, its outcome ours); alone=False: the seeds."""

    def read(b: Build) -> np.ndarray:
        rows = points(b, constant, key, *values)
        counts = rows["seeds_alike" if alone else "seeds"].to_numpy(dtype=float)
        return np.where(counts < 0, np.nan, counts)  # robustness_points.NOT_JUDGED

    which = "seeds that give its outcome alone" if alone else "seeds"
    what = f"claims_robustness: row {key!r} at {constant} = {_values(values)}, the {which}"
    return Source(what, read, ROBUSTNESS)


def held(constant: str, key: str, outcome: str, *values: float, only: bool = False) -> Source:
    """True where the row's outcome is `outcome` at each of `values` (only: and at no other
    value tried), as in "holds at beta2 0.999 only"."""

    def read(b: Build) -> bool:
        rows = points(b, constant, key)
        found = rows.loc[rows["outcome"] == outcome, "value"].to_numpy(dtype=float)
        if only:
            return len(found) == len(values) and bool(same(found, sorted(values)).all())
        return all(same(found, v).any() for v in values)

    where = f"{'exactly ' if only else ''}at {constant} = {_values(values)}"
    return Source(f"claims_robustness: row {key!r} reads {outcome} {where}", read, ROBUSTNESS)


def kept(constant: str, *keys: str, optimizer: str | None = None, outcome: str | None = None,
         but: str | None = None):  # fmt: skip
    """True where each row (`keys`, or every row of `optimizer`: its key's second word, but
    the row `but` where given) has one outcome at every value tried (where given, `outcome`)."""

    def read(b: Build) -> bool:
        table = b.robustness_points(constant)
        if optimizer:
            mine = (table["key"].str.split().str[1] == optimizer) & (table["key"] != but)
        else:
            mine = table["key"].isin(keys)
            if set(keys) - set(table["key"]):
                raise ValueError(f"the robustness points of {constant} lack {sorted(keys)}")
        outcomes = table[mine].groupby("key")["outcome"]
        one = bool(mine.any()) and bool((outcomes.nunique() == 1).all())
        return one and (outcome is None or bool(outcomes.first().eq(outcome).all()))

    rows = f"every row of {optimizer}" if optimizer else ", ".join(repr(k) for k in keys)
    rows += f" but {but!r}" if but else ""
    what = f"claims_robustness: {rows} reads {outcome or 'one outcome'} at every {constant} tried"
    return Source(what, read, ROBUSTNESS)


def config_constants(b: Build) -> dict:
    """The claims job's config's constants (its claims_robustness entries), by name."""
    return b.provenance("claims")["config"].get("constants") or {}


def config_constant(b: Build, name: str) -> Constant:
    """A constant of the claims job's config (its claims_robustness entry)."""
    constants = config_constants(b)
    if name not in constants:
        raise Unbuilt(f"the constant {name} in the claims job's config ({ROBUSTNESS})")
    return Constant.from_params(name, constants[name])


def factor_either_side(name: str, factor: float = 3) -> Source:
    """True where `name` was tried at ours and one value either side, a factor `factor`
    away (to one step of the usual 1-3-10 grid: 0.3, 1, 3 reads "a factor 3")."""

    def read(b: Build) -> bool:
        c = config_constant(b, name)
        ratios = np.array(c.values) / c.ours
        away = np.array([1 / ratios[0], ratios[-1]])
        grid = factor * 10 / 9  # 10 / 3 for 3: 0.3 to 1
        near = (away >= factor * (1 - 1e-9)) & (away <= grid * (1 + 1e-9))
        return len(ratios) == 3 and bool(near.all())

    return Source(f"the config's {name}: tried at ours and a factor {factor:g} either side",
                  read, ROBUSTNESS)  # fmt: skip


# a margin row's value_text (attnbias.claims.beyond._margin): "<range> of the optimal <norm>
# margin at t = <t_last> (<range> at t = <t_before>)"
_RANGE = rf"({NUMBER})(?: to ({NUMBER}))?"
_MARGIN = re.compile(rf"^{_RANGE} of the optimal \S+ margin at t = (\d+) \({_RANGE} at t = (\d+)\)")


def margin_text(text: str) -> dict:
    """A margin row's words read back: its range at the last t, that t, its range at the
    earlier t (a decade before), that t."""
    found = _MARGIN.match(text)
    if not found:
        raise ValueError(f"a margin row's value_text no longer reads as it did: {text!r}")
    late = [value_of(v) for v in found.group(1, 2) if v]
    early = [value_of(v) for v in found.group(4, 5) if v]
    return {"late": late, "t_last": int(found[3]), "early": early, "t_before": int(found[6])}


_PREVIOUS = re.compile(rf"; {_RANGE} at the previous logged t = (\d+)")


def fell_at_end(text: str) -> bool:
    """True where a margin row's range at the last t (its value_text) lies wholly below its
    range at the previous logged t: every seed fell over the last logged interval."""
    found = _PREVIOUS.search(text)
    if not found:
        raise ValueError(f"a margin row's value_text names no previous logged t: {text!r}")
    previous = [value_of(v) for v in found.group(1, 2) if v]
    return max(margin_text(text)["late"]) < min(previous)


def margin(constant: str, key: str, part: str, *values: float) -> Source:
    """A margin row's `part` (margin_text's: early, t_last, t_before) at `values`, all
    together: "falling from 0.71 to 0.85 at t = 2491"."""

    def read(b: Build) -> np.ndarray:
        rows = points(b, constant, key, *values)
        return np.concatenate([np.atleast_1d(margin_text(t)[part]) for t in rows["value_text"]])

    what = f"claims_robustness: row {key!r} at {constant} = {_values(values)}, its {part}"
    return Source(what, read, ROBUSTNESS)


def moved(text: str, rising: bool = True) -> bool:
    """True where a margin row's range at the last t (its value_text) lies wholly above
    (rising) or below (falling) its range a decade before."""
    part = margin_text(text)
    if rising:
        return min(part["late"]) > max(part["early"])
    return max(part["late"]) < min(part["early"])


def trend(constant: str, key: str, *values: float, rising: bool = True) -> Source:
    """True where, at each of `values`, the margin row's range at the last t lies wholly
    above (rising) or below (falling) its range a decade before: every seed rose (fell),
    whichever seed is which."""

    def read(b: Build) -> bool:
        rows = points(b, constant, key, *values)
        return all(moved(text, rising) for text in rows["value_text"])

    how = "rising" if rising else "falling"
    what = f"claims_robustness: row {key!r} at {constant} = {_values(values)}: its margin {how}"
    return Source(what, read, ROBUSTNESS)


BENCHMARKS = "claims_robustness"  # results/benchmarks/claims_robustness/<constant>.tsv


def cpu_seconds(pattern: str) -> Source:
    """The CPU seconds (user + sys, Snakemake's cpu_time) of the points jobs of the
    constants matching `pattern`, summed."""
    return Source(
        f"results/benchmarks/{BENCHMARKS}/{pattern}.tsv: the jobs' cpu_time, summed",
        lambda b: float(b.benchmarks(BENCHMARKS, pattern)["cpu_time"].sum()),
        ROBUSTNESS,
    )


def largest_jobs(pattern: str, *names: str) -> Source:
    """True where `names` are the len(names) points jobs of most CPU seconds (cpu_time)
    among those of the constants matching `pattern`."""

    def read(b: Build) -> bool:
        cpu = b.benchmarks(BENCHMARKS, pattern)["cpu_time"].sort_values(ascending=False)
        return set(cpu.index[: len(names)]) == set(names)

    what = f"results/benchmarks/{BENCHMARKS}: the largest cpu_time of {pattern}: {list(names)}"
    return Source(what, read, ROBUSTNESS)
