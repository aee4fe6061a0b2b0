"""Configs from others, fuzzed (issue 61): random mutations of every shipped config
(tests/support/config_fuzz.py: types, signs, huge and non-finite numbers, control and TeX
characters, deleted, renamed, duplicated and swapped keys, deep nesting, a file's lines
duplicated, deleted or swapped) are each accepted by the workflow's checks and then read
at parse time without an error, or refused before any job: a ConfigError naming the key
path, or a ConfigFileError naming the file and the line. No other exception, no hang.

A few hundred cases in the fast suite (derandomized: the same cases on every run), thousands
in the slow one, where a sample of the accepted ones also runs `snakemake -n` and builds a
small target. The defects the issue found are named regression tests below, some also run
through Snakemake; the fuzzing itself (these suites, and 2,000 random cases while they were
written) found no other once they were fixed. Its control: without check_keys (the issue's
code) the fast test fails with the TypeError that common.smk's wildcards died of.
"""

from __future__ import annotations

import copy

import pytest
import yaml
from config_fuzz import case, dump, file_refusal_ok, verdict
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from project import REPO, copy_project, snakemake

from attnbias.workflow import configfiles

# a hang fails the case (the slowest accepted case, config.yaml's, takes about 1 s)
NO_HANG = 30_000  # ms
FUZZ = dict(
    deadline=NO_HANG,
    database=None,  # no .hypothesis folder in the repository
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _check_case(data, tmp_path) -> str:
    path, config = case(data, tmp_path)
    if isinstance(config, configfiles.ConfigFileError):
        assert file_refusal_ok(config, path), config
        return "file refused"
    result = verdict(config)
    assert result == "accepted" or result.startswith("config key "), result
    return result


@settings(max_examples=200, derandomize=True, **FUZZ)
@given(data=st.data())
def test_mutated_configs_are_accepted_or_refused_by_key(data, tmp_path):
    _check_case(data, tmp_path)


@pytest.mark.slow
@settings(max_examples=3000, **FUZZ)
@given(data=st.data())
def test_thousands_of_mutated_configs_are_accepted_or_refused_by_key(data, tmp_path):
    _check_case(data, tmp_path)


# ---------------------------------------------------------------- a sample through Snakemake


@pytest.fixture(scope="module")
def fuzz_project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("fuzz-project"))


BUILDS = {"count": 0}  # builds so far in this session's sample
MAX_BUILDS = 3


@pytest.mark.slow
@settings(max_examples=15, **{**FUZZ, "suppress_health_check": list(HealthCheck)})
@given(data=st.data())
def test_a_sample_of_accepted_mutations_dry_runs_and_builds(data, fuzz_project, tmp_path):
    """An accepted config's dry run plans without an error; for the first few of the tiny
    configs, the SVM file and one training run of one of its experiments build. (Only accepted
    cases count: `assume` makes hypothesis draw until it has max_examples of them.)"""
    path, config = case(data, tmp_path)
    assume(not isinstance(config, configfiles.ConfigFileError))
    assume(verdict(copy.deepcopy(config)) == "accepted")
    name = f"fuzz{abs(hash(dump(config))) % 10**8}"
    config["results"] = f"results-{name}"  # a folder of its own (its owner: this file)
    (fuzz_project / "config" / f"{name}.yaml").write_text(dump(config))
    dry = snakemake(fuzz_project, "-n", config=f"config/{name}.yaml", check=False)
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0 and "Traceback" not in out, out
    tiny = path.name.startswith("tiny")
    if not tiny or BUILDS["count"] >= MAX_BUILDS or not config["experiments"]:
        return
    BUILDS["count"] += 1
    experiment = data.draw(st.sampled_from(sorted(config["experiments"])), label="build")
    optimizer = data.draw(st.sampled_from(sorted(config["experiments"][experiment]["optimizers"])))
    targets = [f"results-{name}/svm/{experiment}.npz",
               f"results-{name}/train/{experiment}/{optimizer}.parquet"]  # fmt: skip
    built = snakemake(fuzz_project, *targets, "-c1", config=f"config/{name}.yaml", check=False)
    out = built.stdout + built.stderr
    assert built.returncode == 0, out
    print(f"built {targets}")  # shown with -s: which targets the sample built


# ---------------------------------------------------------------- named regressions (issue 61)

DM = {"model": "dm", "params": {"n": 6, "T": 3, "d": 12}}


def _tiny():
    return yaml.safe_load((REPO / "config/tiny.yaml").read_text())


def _fig8_on_dm(c):
    c["experiments"]["fig8"]["data"] = copy.deepcopy(DM)


def _fig2_on_dm(c):
    c["experiments"]["fig2"]["data"] = copy.deepcopy(DM)


def _optimizer_named(name):
    def change(c):
        optimizers = c["experiments"]["fig2"]["optimizers"]
        optimizers[name] = optimizers.pop("gd")

    return change


def _experiment_named(name):
    def change(c):
        c["experiments"][name] = c["experiments"].pop("fig8")

    return change


def _no_params(c):
    del c["experiments"]["fig2"]["data"]["params"]


REGRESSIONS = {
    # passed every check; the svm job died with KeyError: 'u_mm'
    "fig8_on_dm": (_fig8_on_dm, "config key experiments.fig8.train.train_u: data model dm"),
    "fig2_on_dm": (_fig2_on_dm, "config key experiments.fig2.data.model: data model dm"),
    # TypeError in common.smk's wildcard constraints
    "optimizer_named_1": (_optimizer_named(1), "config key experiments.fig2.optimizers: the key 1"),
    "optimizer_named_null": (
        _optimizer_named(None),
        "config key experiments.fig2.optimizers: the key null",
    ),
    "experiment_named_1": (_experiment_named(1), "config key experiments: the key 1"),
    "experiment_named_null": (_experiment_named(None), "config key experiments: the key null"),
    # a 45-line schema dump from Snakemake's validation (params: {} was refused by key)
    "data_without_params": (
        _no_params,
        "config key experiments.fig2.data.params: 'n' is a required property",
    ),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_named_regressions_are_refused_by_key(name):
    change, refusal = REGRESSIONS[name]
    config = _tiny()
    change(config)
    assert verdict(config).startswith(refusal)
    assert verdict(_tiny()) == "accepted"  # the control


@pytest.mark.parametrize("name", ["fig8_on_dm", "optimizer_named_null", "data_without_params"])
def test_named_regressions_are_refused_by_snakemake_before_any_job(name, tmp_path):
    """Through `snakemake -n`: the refusal, in one line, no traceback and no schema dump."""
    change, refusal = REGRESSIONS[name]
    workdir = copy_project(tmp_path)
    config = _tiny()
    change(config)
    (workdir / "config" / "bad.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = snakemake(workdir, "-n", config="config/bad.yaml", check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 1
    assert refusal in out, out
    assert "TypeError" not in out and "Failed validating" not in out
    assert not (workdir / "results-tiny").exists()
