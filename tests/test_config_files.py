"""A config file is code where it is a YTE template (issue 41, item 1): Snakemake evaluates
the `?...` expressions of a file whose top level holds `__use_yte__: true`. The workflow
reads every config file of a run as text and refuses a template by name before any job:
the default config before Snakemake loads it (its code never runs), a `--configfile` after
Snakemake's command line has evaluated it (we cannot stop that; the run still stops
before any job, and docs/running.md says to run only configs you trust)."""

from __future__ import annotations

import pytest
from project import copy_project, snakemake

from attnbias.workflow import configfiles

MARK = "created-by-the-config"


def template(results: str) -> str:
    """A YTE config whose `results` value creates the file MARK when evaluated."""
    return (
        "__use_yte__: true\n"
        f'results: ?__import__("pathlib").Path("{MARK}").touch() or "{results}"\n'
    )


@pytest.mark.parametrize("flag", ["true", "false"])
def test_a_yte_template_is_refused_by_file_name(tmp_path, flag):
    path = tmp_path / "shared.yaml"
    path.write_text(f"__use_yte__: {flag}\nresults: results-x\n")
    with pytest.raises(configfiles.ConfigFileError) as err:
        configfiles.read_plain(path)
    assert str(err.value).startswith(f"config file {path} is a YTE template")
    assert "run only config files you trust" in str(err.value)


def test_plain_yaml_and_json_are_read_without_evaluating_anything(tmp_path):
    plain, json = tmp_path / "plain.yaml", tmp_path / "c.json"
    plain.write_text('results: ?__import__("os").getcwd()\n')  # a plain string here
    json.write_text('{"results": "results-json"}')
    assert configfiles.read_plain(plain) == {"results": '?__import__("os").getcwd()'}
    assert configfiles.read_plain(json) == {"results": "results-json"}
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(configfiles.ConfigFileError, match="list.yaml: holds no mapping"):
        configfiles.read_plain(tmp_path / "list.yaml")


def test_a_default_config_that_is_a_template_never_runs(tmp_path):
    """config/config.yaml replaced by a template: refused before Snakemake loads it, so its
    code does not run (the file MARK must not exist after the dry run)."""
    workdir = copy_project(tmp_path)
    (workdir / "config/config.yaml").write_text(template("results"))
    result = snakemake(workdir, "-n", config=None, check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config/config.yaml is a YTE template (top-level key __use_yte__)" in out, out
    assert not (workdir / MARK).exists()


def test_a_configfile_that_is_a_template_stops_the_run_before_any_job(tmp_path):
    """A --configfile template: Snakemake's command line evaluates it before the Snakefile
    runs, so MARK exists (the code ran; docs/running.md says so); the run then stops with
    the reason, before any job: no results folder, rc != 0, even on a dry run with valid
    keys (which exited 0 before)."""
    workdir = copy_project(tmp_path)
    tiny = (workdir / "config/tiny.yaml").read_text()
    body = "\n".join(line for line in tiny.splitlines() if not line.startswith("results:"))
    (workdir / "config/shared.yaml").write_text(template("results-shared") + body + "\n")
    result = snakemake(workdir, "-n", config="config/shared.yaml", check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config file config/shared.yaml is a YTE template" in out, out
    assert (workdir / MARK).exists()  # Snakemake ran it before us: the limit we document
    assert not (workdir / "results-shared").exists()
