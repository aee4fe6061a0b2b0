"""Random mutations of the shipped configs (config/*.yaml) and the verdict the workflow's
config reading gives each, for tests/project/test_config_fuzz.py (hypothesis).

A case is a shipped config file's text, perhaps changed as text (a line duplicated, deleted
or swapped with the next, a list nested deep), read as the workflow reads it
(configfiles.read_plain), then changed as data: a value replaced (a wrong type, a sign, a
huge or non-finite number, control and TeX characters, a date, a nest up to 40 deep: a
1,000-deep one is made as text, since copying it or listing its paths would recurse past
Python's limit here), a key deleted, renamed (to a name, a number, null) or duplicated
under another name, two values swapped.
`verdict` runs the checks common.smk runs, in-process, and the parse-time reading of an
accepted config (WorkflowConfig, the sweeps', the jobs' params, the wildcard constraints).
It returns "accepted" or the refusal; anything else (a bare error, a traceback) propagates.
"""

from __future__ import annotations

import copy
import re
from functools import cache

import yaml
from hypothesis import strategies as st
from project import REPO, checked_config

from attnbias.workflow import configfiles
from attnbias.workflow.configkeys import ConfigError

CONFIGS = sorted(p.name for p in (REPO / "config").glob("*.yaml"))
# keys of the shipped configs: a renamed key often becomes another real key (a swap of roles)
NAMES = ("layout", "model", "params", "rule", "lr", "p", "norm", "norms", "train_u", "seeds",
         "title", "label", "data", "train", "optimizers", "experiments", "results", "n", "T",
         "d", "iterations", "figure", "cap", "name", "default_build", "first_seed")  # fmt: skip
# text that matplotlib, LaTeX, the report, a shell or a terminal would read as more than text
ODD_TEXT = "$\\{}_^%&#~<>\"'`|;\x00\x07\x1b\x7f\u200b\u202e\n\t é∞"


@cache
def shipped_text(name: str) -> str:
    return (REPO / "config" / name).read_text()


def shipped_config(name: str) -> dict:
    """A fresh copy of the shipped config `name`, read by configfiles.read_plain once."""
    return copy.deepcopy(_read_shipped(name))


@cache
def _read_shipped(name: str) -> dict:
    return configfiles.read_plain(REPO / "config" / name)


def _scalars():
    numbers = st.one_of(
        st.integers(-(10**40), 10**40),
        st.sampled_from([0, -1, 1, 2, 2**31, 2**63, -(2**63), 10**400]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([0.0, -0.0, 1e-320, 1e308, -1e308, 1.0000001, 1e6, 0.5, 3.0]),
    )
    texts = st.one_of(
        st.text(alphabet=ODD_TEXT + "abc01", max_size=12),
        st.sampled_from(["", " ", "fig2", "gd", "dm", "example1", "joint", "l3", "l1", "1",
                         "null", "$x$", "$\\frac{$", "a_b", "GD ", "\\", "%", "true"]),
    )  # fmt: skip
    return st.one_of(numbers, texts, st.booleans(), st.none(), st.dates())


VALUES = st.recursive(
    _scalars(),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(NAMES), st.text(max_size=6)), inner, max_size=3),
    ),
    max_leaves=6,
)
KEYS = st.one_of(
    st.sampled_from(NAMES), st.text(alphabet=ODD_TEXT + "abc", max_size=8),
    st.integers(-3, 3), st.none(), st.booleans(), st.floats(allow_nan=False, width=16),
)  # fmt: skip


def paths(value, path=()) -> list[tuple]:
    """Every path into `value` (dict keys and list indices), depth first, the root first."""
    found = [path]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list) else ()  # fmt: skip
    for key, item in items:
        found += paths(item, (*path, key))
    return found


def _parent(config, path):
    for key in path[:-1]:
        config = config[key]
    return config


def mutate_text(text: str, data) -> str:
    """One change of the file's text, or none."""
    lines = text.splitlines(keepends=True)
    ops = ["none", "duplicate", "delete", "swap", "nest"]
    op = data.draw(
        st.sampled_from(ops) if data.draw(st.booleans(), label="as text") else st.just("none"),
        label="text",
    )
    if op == "none" or len(lines) < 2:
        return text
    i = data.draw(st.integers(0, len(lines) - 2), label="line")
    if op == "duplicate":
        lines.insert(i, lines[i])
    elif op == "delete":
        del lines[i]
    elif op == "swap":
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    else:
        depth = data.draw(st.sampled_from([2, 20, 31, 40, 1000]), label="depth")
        lines.insert(i, "extra: " + "[" * depth + "]" * depth + "\n")
    return "".join(lines)


def mutate(config, data):
    """One change of the config as data (see the module doc); returns the config."""
    where = paths(config)
    path = where[data.draw(st.integers(0, len(where) - 1), label="at")]
    op = data.draw(
        st.sampled_from(["replace", "negate", "delete", "rename", "duplicate", "swap", "nest"]),
        label="op",
    )
    if not path:  # the root: replace it, or add a key at the top level
        key = data.draw(KEYS, label="key")
        if isinstance(config, dict):
            config[key] = data.draw(VALUES, label="value")
        return config
    parent, key = _parent(config, path), path[-1]
    if op == "replace":
        parent[key] = data.draw(VALUES, label="value")
    elif (
        op == "negate"
        and isinstance(parent[key], int | float)
        and not isinstance(parent[key], bool)
    ):
        parent[key] = -parent[key]
    elif op == "delete":
        del parent[key]
    elif op == "rename" and isinstance(parent, dict):
        parent[data.draw(KEYS, label="new name")] = parent.pop(key)
    elif op == "duplicate" and isinstance(parent, dict):
        parent[data.draw(KEYS, label="copy's name")] = copy.deepcopy(parent[key])
    elif op == "duplicate":
        parent.append(copy.deepcopy(parent[key]))
    elif op == "swap":
        other = where[data.draw(st.integers(0, len(where) - 1), label="with")]
        if other and not _related(path, other):
            other_parent = _parent(config, other)
            parent[key], other_parent[other[-1]] = other_parent[other[-1]], parent[key]
    elif op == "nest":
        depth = data.draw(st.sampled_from([1, 2, 30, 31, 40]), label="nest depth")
        value = parent[key]
        for _ in range(depth):
            value = [value]
        parent[key] = value
    return config


def _related(a: tuple, b: tuple) -> bool:
    """One path inside the other (a swap would put a value inside itself)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def case(data, tmp_path):
    """A mutated shipped config, read from its file as the workflow reads it: (its path, the
    config or the file's refusal)."""
    name = data.draw(st.sampled_from(CONFIGS), label="config")
    path = tmp_path / name
    text = mutate_text(shipped_text(name), data)
    if text == shipped_text(name):  # read as the workflow reads it once (shipped_config)
        config = shipped_config(name)
    else:
        path.write_text(text)
        try:
            config = configfiles.read_plain(path)
        except configfiles.ConfigFileError as err:
            return path, err
    for _ in range(data.draw(st.integers(1, 3), label="changes")):
        config = mutate(config, data)
    return path, config


def verdict(config) -> str:
    """ "accepted", or the refusal's message, which must name a key path (a ConfigError);
    any other exception propagates."""
    try:
        checked_config(config)
    except ConfigError as err:
        return str(err)
    parse_time_reading(config)
    return "accepted"


def parse_time_reading(config: dict) -> None:
    """What workflow/rules/common.smk builds from a checked config at parse time."""
    from attnbias.studies.robustness_config import RobustnessConfig
    from attnbias.studies.sweep_config import SweepConfig
    from attnbias.workflow.config import WorkflowConfig
    from attnbias.workflow.job_params import JobParams

    wf = WorkflowConfig(config)
    JobParams(wf, SweepConfig(config), RobustnessConfig(wf))
    names = [*wf.experiments, *wf.real_experiments, *wf.study.get("optimizers", {})]
    names += [o for e in [*wf.experiments.values(), *wf.real_experiments.values()]
              for o in e["optimizers"]]  # fmt: skip
    "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))  # the constraints


def file_refusal_ok(err: configfiles.ConfigFileError, path) -> bool:
    """A file's refusal names the file and the line (or says it holds no mapping)."""
    text = str(err)
    named = text.startswith(f"config file {configfiles.name(path)}")
    return named and ("line" in text or "holds no mapping" in text)


def dump(config) -> str:
    """A config as YAML text (for a regression test's record)."""
    return yaml.safe_dump(config, sort_keys=False)
