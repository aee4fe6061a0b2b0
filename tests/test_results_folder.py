"""A copied config never overwrites the default config's results (issue 34): a config file
other than the default that writes into the folder holding the default's results is
refused, naming the key `results`; a folder of its own, or a fresh one, takes it."""

from __future__ import annotations

import pytest
import yaml
from project import copy_project, snakemake

from attnbias.workflow import configcheck, results_folder

DEFAULT = "config/config.yaml"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "config").mkdir()
    (tmp_path / DEFAULT).write_text("results: results\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_copy_may_not_write_into_the_default_results(workdir):
    results_folder.claim({"results": "results"}, [], DEFAULT)  # the default's build
    with pytest.raises(configcheck.ConfigError, match=r"config key results: 'results' holds"):
        results_folder.check({"results": "results"}, ["config/mine.yaml"], DEFAULT)


def test_the_refusal_names_the_default_and_a_folder_to_use(workdir):
    results_folder.claim({"results": "results"}, [], DEFAULT)
    with pytest.raises(configcheck.ConfigError) as err:
        results_folder.check({"results": "results"}, ["config/mine.yaml"], DEFAULT)
    assert "default config, config/config.yaml" in str(err.value)
    assert "results: results-mine" in str(err.value)


@pytest.mark.parametrize(
    "configfiles, results",
    [
        ([], "results"),  # the default itself, again
        (["config/config.yaml"], "results"),  # the default named with --configfile
        (["config/mine.yaml"], "results-mine"),  # the copy, in a folder of its own
    ],
)
def test_the_default_and_a_copy_in_its_own_folder_pass(workdir, configfiles, results):
    results_folder.claim({"results": "results"}, [], DEFAULT)
    results_folder.check({"results": results}, configfiles, DEFAULT)


def test_a_fresh_folder_or_one_of_another_copy_is_not_refused(workdir):
    results_folder.check({"results": "results"}, ["config/mine.yaml"], DEFAULT)  # fresh
    results_folder.claim({"results": "results"}, ["config/other.yaml"], DEFAULT)
    results_folder.check({"results": "results"}, ["config/mine.yaml"], DEFAULT)
    assert (workdir / "results/.attnbias-config").read_text() == "config/other.yaml\n"


@pytest.mark.slow
def test_a_copied_config_is_refused_before_any_job(tmp_path):
    """The issue's case, with the real Snakemake: after the default config built (here: its
    record, as the workflow's onstart writes it), a copy with another lr is refused naming
    the key, and a dry run of the default still plans."""
    workdir = copy_project(tmp_path)
    results_folder_file = workdir / "results" / results_folder.OWNER_FILE
    results_folder_file.parent.mkdir(exist_ok=True)
    results_folder_file.write_text("config/config.yaml\n")
    config = yaml.safe_load((workdir / DEFAULT).read_text())
    config["experiments"]["fig2"]["optimizers"]["gd"]["lr"] = 2.0
    (workdir / "config/mine.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(workdir, "results/fig2.pdf", "-n", config="config/mine.yaml", check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config key results: 'results' holds the results of the default config" in out, out
    config["results"] = "results-mine"
    (workdir / "config/mine.yaml").write_text(yaml.safe_dump(config))
    snakemake(workdir, "results-mine/fig2.pdf", "-n", config="config/mine.yaml")
