"""A sweep's grid: its points, their readable names, and the experiment each point trains.

A `sweeps:` entry of the config names a base experiment (`base`) and a `grid` of dotted key
paths of that experiment (`data.params.d`, `optimizers.ngd.lr`, `train.iterations`), each
with a list of values. The points are the Cartesian product of the lists, the first key
varying slowest; the keys of the grid's `zip:` group advance together, as one axis. A key
with one value sets that value at every point and stays out of the points' names.

A point's name is its wildcard (`d~100_lr~0.1`): `label~value` per axis of more than one
value, the label being the shortest dotted suffix of the key that tells it from the other
axes' keys (a zip group is named by its first key). A point's experiment is the base with
the point's values set: it depends on nothing else, so adding a point leaves the others'
jobs as they are, and a change to the base reruns exactly the points whose experiment
changes (the grid's own keys override the base).

No torch, no Snakemake: the workflow parses with this, and configcheck refuses with it.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections import Counter

from attnbias.optim.spec import config_settings

MAX_POINTS = 100_000  # more points than this are refused (the workflow's DAG would crawl)
ZIP = "zip"  # the grid key of the group of keys whose lists advance together


class GridError(ValueError):
    """A bad grid; `path` is the key path under the sweep entry that is wrong."""

    def __init__(self, path: tuple, message: str):
        self.path = path
        super().__init__(message)


class MissingKeyError(GridError):
    """A grid key that the base experiment does not set (`key`: the dotted path)."""

    def __init__(self, path: tuple, message: str, key: str):
        self.key = key
        super().__init__(path, message)


def axes(grid: dict) -> list[dict[str, list]]:
    """The grid's axes in config order: {key: values}, one key each, or the zip group's."""
    out = []
    for key, values in grid.items():
        out.append(dict(values) if key == ZIP else {key: values})
    return out


def keys(grid: dict) -> list[str]:
    """Every key path of the grid, in config order."""
    return [key for axis in axes(grid) for key in axis]


def swept(grid: dict) -> list[dict[str, list]]:
    """The axes with more than one value: the ones that name points and the figure's axes."""
    return [axis for axis in axes(grid) if len(next(iter(axis.values()))) > 1]


def labels(grid: dict) -> list[str]:
    """Each swept axis's label: the shortest dotted suffix of its (first) key that no other
    swept axis's key ends with (`d` for data.params.d, `ngd.lr` beside `gd.lr`)."""
    firsts = [next(iter(axis)) for axis in swept(grid)]
    out = []
    for key in firsts:
        parts = key.split(".")
        others = [k.split(".") for k in firsts if k != key]
        for size in range(1, len(parts) + 1):
            if all(o[-size:] != parts[-size:] for o in others):
                break
        out.append(".".join(parts[-size:]))
    return out


def titles(grid: dict) -> list[str]:
    """Each swept axis as a figure names it: its label (`labels`, which point names use),
    said whose where its keys are optimizers' settings (`lr of ngd and joint-ngd` for a zip
    of optimizers.ngd.lr and optimizers.joint-ngd.lr; `lr of ngd` for optimizers.ngd.lr)."""
    out = []
    for label, axis in zip(labels(grid), swept(grid), strict=True):
        parts = [key.split(".") for key in axis]
        setting = parts[0][-1]
        owned = all(len(p) == 3 and p[0] == "optimizers" and p[2] == setting for p in parts)
        owners = [p[1] for p in parts]
        whose = ", ".join(owners[:-1]) + " and " + owners[-1] if len(owners) > 1 else owners[0]
        out.append(f"{setting} of {whose}" if owned else label)
    return out


def format_value(value) -> str:
    """A value as it appears in a point's name: 0.1, 1e+10, 100, none, true."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# Snakemake refuses a wildcard value that ends in one substring repeated 20 to 100 times
# (snakemake.io.PeriodicityDetector, taken for a rule that feeds on itself): a point name
# like that is refused here instead, by the grid key whose value ends it.
PERIODIC = re.compile(r"(.+)\1{19,99}$")


def points(grid: dict) -> dict[str, dict[str, object]]:
    """Point name -> {key path: value} for every key of the grid, in grid order."""
    all_axes = axes(grid)
    names = dict(zip(map(lambda a: next(iter(a)), swept(grid)), labels(grid), strict=True))
    paths = {next(iter(axis)): (*path, next(iter(axis))) for path, axis in _paths(grid)}
    columns = [list(enumerate(zip(*axis.values(), strict=True))) for axis in all_axes]
    out: dict[str, dict] = {}
    for combination in itertools.product(*columns):
        values, parts, last = {}, [], None
        for axis, (i, row) in zip(all_axes, combination, strict=True):
            values.update(zip(axis, row, strict=True))
            first = next(iter(axis))
            if first in names:
                parts.append(f"{names[first]}~{format_value(row[0])}")
                last = (*paths[first], i)
        name = "_".join(parts) or "base"
        if name in out:
            raise GridError(("grid",), f"two points have the name {name}; make the values differ")
        if last is not None and (periodic := PERIODIC.search(name)):
            raise GridError(
                last,
                f"gives the point name {name!r}, which ends in {periodic[1]!r} repeated: "
                "Snakemake refuses such a file name (PeriodicWildcardError); choose a value "
                "without a long repeated run",
            )
        out[name] = values
    return out


def size(grid: dict) -> int:
    """How many points the grid has (without building them)."""
    count = 1
    for axis in axes(grid):
        count *= len(next(iter(axis.values()), []))
    return count


def apply(experiment: dict, values: dict[str, object]) -> dict:
    """A copy of `experiment` with each dotted key path set to its value."""
    out = copy.deepcopy(experiment)
    for key, value in values.items():
        *parents, leaf = key.split(".")
        place = out
        for part in parents:
            place = place[part]
        place[leaf] = value
    return out


def trained(entry: dict, experiment: dict) -> dict:
    """The base experiment with the optimizers the entry trains: those its `optimizers` list
    names, in that order, or all of the base's where it names none."""
    names = entry.get("optimizers")
    if not names:
        return experiment
    return {**experiment, "optimizers": {n: experiment["optimizers"][n] for n in names}}


def point_experiment(entry: dict, experiment: dict, values: dict) -> dict:
    """What one point trains: the base (with the entry's optimizers) with the point's values
    and the entry's seeds, less the texts (title, labels, paper_figure) that change no number."""
    point = apply(trained(entry, experiment), values)
    for key in ("title", "default_build", "paper_figure"):
        point.pop(key, None)
    point["optimizers"] = {n: config_settings(o) for n, o in point["optimizers"].items()}
    if entry.get("seeds") is not None:
        point["seeds"] = entry["seeds"]
    return point


def check(entry: dict, experiment: dict) -> None:
    """Refuse a grid that is empty, too large, uneven in its zip group, or that names a key
    the base experiment lacks; GridError names the key path under the entry."""
    known = list(experiment["optimizers"])
    for i, name in enumerate(entry.get("optimizers") or []):
        if name not in known:
            raise GridError(("optimizers", i), f"{name!r} is no optimizer of the base ({known})")
    experiment = trained(entry, experiment)
    grid = entry.get("grid") or {}
    if not grid:
        raise GridError(("grid",), "the grid is empty; give at least one key path and its values")
    if ZIP in grid:
        group = grid[ZIP]
        if not isinstance(group, dict) or not group:
            raise GridError(("grid", ZIP), "a zip group maps two or more key paths to lists")
        lengths = {key: len(values) for key, values in group.items()}
        if len(set(lengths.values())) > 1:
            raise GridError(("grid", ZIP), f"its lists must have one length each; got {lengths}")
    for axis_path, axis in _paths(grid):
        for key, values in axis.items():
            if not values:
                raise GridError((*axis_path, key), "an empty list of values")
            _check_key(experiment, key, (*axis_path, key))
            if len(values) > 1 and key == next(iter(axis)):  # the values that name points
                _check_name_part(values, (*axis_path, key))
    repeated = [k for k, n in Counter(keys(grid)).items() if n > 1]
    if repeated:
        raise GridError(("grid", repeated[0]), "appears twice in the grid (once in zip?)")
    if size(grid) > MAX_POINTS:
        raise GridError(
            ("grid",), f"{size(grid)} points exceed the limit of {MAX_POINTS}; split the sweep"
        )
    points(grid)  # names that collide


def _check_name_part(values: list, path: tuple) -> None:
    """Each value must give a file-name part: a point's name is a folder of its files."""
    for i, value in enumerate(values):
        text = format_value(value)
        bad = [c for c in text if c in "/\\" or not c.isprintable()]
        if bad or text.strip(".") == "":
            why = f"holds {bad[0]!r}" if bad else "is empty or only dots"
            raise GridError(
                (*path, i),
                f"value {value!r} {why}, so it cannot be part of a point's file names "
                "(results/sweeps/<name>/<point>/...); choose another",
            )


def _paths(grid: dict):
    for key, values in grid.items():
        if key == ZIP:
            yield ("grid", ZIP), values
        else:
            yield ("grid",), {key: values}


def _check_key(experiment: dict, key: str, path: tuple) -> None:
    place, walked = experiment, []
    for part in key.split("."):
        if not isinstance(place, dict) or part not in place:
            where = ".".join(walked) or "(the experiment's top level)"
            known = sorted(place) if isinstance(place, dict) else []
            raise MissingKeyError(
                path,
                f"the base experiment has no key {part!r} under {where} (it has {known}); a "
                "grid key must be set in the base experiment, so that the base says what "
                "every other point is",
                key,
            )
        walked.append(part)
        place = place[part]
    if isinstance(place, dict):
        raise GridError(path, f"{key} is a section of the experiment, not a setting; name a key")
