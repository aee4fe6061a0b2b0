"""Every results folder has one owner: a run whose config file(s) differ from
the folder's recorded owner is refused, naming the owner and the key `results`, whatever
config either is; a folder holding files without a record is refused too; a fresh folder,
or the owner itself (edited in place: an incremental rerun), passes; `take-over` hands a
folder over deliberately."""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from project import copy_project, snakemake

from attnbias.workflow import configfiles, configkeys, results_folder

DEFAULT = "config/config.yaml"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "config").mkdir()
    (tmp_path / DEFAULT).write_text("results: results\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refusal(config: dict, files: list) -> str:
    with pytest.raises(configkeys.ConfigError) as err:
        results_folder.check(config, files, DEFAULT)
    assert err.value.key == "results"
    return str(err.value)


def test_a_copy_may_not_write_into_the_default_results(workdir):
    results_folder.claim({"results": "results"}, [], DEFAULT)  # the default's build
    message = refusal({"results": "results"}, ["config/mine.yaml"])
    assert message.startswith("config key results: 'results' belongs to the config " + DEFAULT)
    assert "results: results-mine" in message  # a folder to use instead
    # never the takeover: following it would overwrite the owner's results
    assert results_folder.COMMAND not in message


def test_a_copy_of_a_non_default_config_may_not_write_into_its_folder(workdir):
    """The issue's case: tiny.yaml owns results-tiny; its copy keeps `results:`."""
    results_folder.claim({"results": "results-tiny"}, ["config/tiny.yaml"], DEFAULT)
    message = refusal({"results": "results-tiny"}, ["config/tiny-copy.yaml"])
    assert "'results-tiny' belongs to the config config/tiny.yaml" in message
    assert "running config/tiny-copy.yaml there" in message
    record = workdir / "results-tiny" / results_folder.OWNER_FILE
    assert results_folder.read_record(record.read_text())[0] == "config/tiny.yaml"  # kept


def test_the_default_may_not_write_into_a_folder_a_copy_owns(workdir):
    results_folder.claim({"results": "results"}, ["config/mine.yaml"], DEFAULT)
    assert "belongs to the config config/mine.yaml" in refusal({"results": "results"}, [])


@pytest.mark.parametrize(
    "configfiles, results",
    [
        ([], "results"),  # the default itself, again
        (["config/config.yaml"], "results"),  # the default named with --configfile
        (["./config/../config/config.yaml"], "results"),  # the same file, spelt otherwise
        (["config/mine.yaml"], "results-mine"),  # a copy, in a fresh folder of its own
    ],
)
def test_the_owner_and_a_fresh_folder_pass(workdir, configfiles, results):
    results_folder.claim({"results": "results"}, [], DEFAULT)
    results_folder.check({"results": results}, configfiles, DEFAULT)


def test_a_folder_with_files_but_no_owner_record_is_refused(workdir):
    """A default folder built before the record existed is not left unprotected."""
    (workdir / "results").mkdir()
    results_folder.check({"results": "results"}, [], DEFAULT)  # empty: fresh
    (workdir / "results/fig2.pdf").write_bytes(b"%PDF")
    message = refusal({"results": "results"}, [])
    assert "holds files but no record of the config that wrote them" in message
    assert results_folder.COMMAND not in message and "results: results-config" in message


def test_of_two_runs_started_at_once_into_a_fresh_folder_the_first_wins(workdir):
    """Both pass `check` on the fresh folder; the first `claim` records its config, the
    second is refused there (before any job), and the record stays the first's."""
    fresh = {"results": "results-shared"}
    results_folder.check(fresh, ["config/a.yaml"], DEFAULT)
    results_folder.check(fresh, ["config/b.yaml"], DEFAULT)
    results_folder.claim(fresh, ["config/a.yaml"], DEFAULT)
    with pytest.raises(configkeys.ConfigError, match="belongs to the config config/a.yaml"):
        results_folder.claim(fresh, ["config/b.yaml"], DEFAULT)
    record = workdir / "results-shared" / results_folder.OWNER_FILE
    assert results_folder.read_record(record.read_text())[0] == "config/a.yaml"
    results_folder.claim(fresh, ["config/a.yaml"], DEFAULT)  # the owner again: fine


def test_a_record_being_written_refuses_the_other_run(workdir):
    """The winner created the record and has not written it yet: the other run is refused
    rather than taking an empty record for its own."""
    record = workdir / "results-shared" / results_folder.OWNER_FILE
    record.parent.mkdir()
    record.write_text("")
    with pytest.raises(configkeys.ConfigError, match="being recorded"):
        results_folder.claim({"results": "results-shared"}, ["config/b.yaml"], DEFAULT)


def test_two_projects_writing_into_one_absolute_folder_are_two_owners(tmp_path, monkeypatch):
    """Two working directories, each with its own config/config.yaml, and the same absolute
    `results:`: the second is refused, naming the first's working directory; a project
    copied whole (its results folder inside it) is still its own owner."""
    shared = tmp_path / "shared-results"
    first, second = tmp_path / "first", tmp_path / "second"
    for project in (first, second):
        (project / "config").mkdir(parents=True)
        (project / DEFAULT).write_text(f"results: {shared}\n")
    monkeypatch.chdir(first)
    results_folder.claim({"results": str(shared)}, [], DEFAULT)
    results_folder.check({"results": str(shared)}, [], DEFAULT)  # the owner
    monkeypatch.chdir(second)
    message = refusal({"results": str(shared)}, [])
    assert f"belongs to the config {DEFAULT} of the working directory {first.resolve()}" in message
    # a copy of a whole project, results inside: the same owner
    monkeypatch.chdir(first)
    results_folder.claim({"results": "results"}, [], DEFAULT)
    (first / "results" / "fig2.pdf").write_bytes(b"%PDF")
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    monkeypatch.chdir(copy)
    results_folder.check({"results": "results"}, [], DEFAULT)


def test_a_record_from_before_the_working_directory_was_kept_still_counts(workdir):
    record = workdir / "results" / results_folder.OWNER_FILE
    record.parent.mkdir()
    record.write_text(f"{DEFAULT}\n")
    results_folder.check({"results": "results"}, [], DEFAULT)
    assert "belongs to the config " + DEFAULT in refusal({"results": "results"}, ["config/b.yaml"])


def test_an_owner_record_that_is_not_text_is_refused_by_name(workdir):
    record = workdir / "results" / results_folder.OWNER_FILE
    record.parent.mkdir()
    record.write_bytes(b"config/\xff\xfe.yaml\n")
    message = refusal({"results": "results"}, [])
    assert f"owner record {record.relative_to(workdir)} that is not UTF-8 text" in message


@pytest.mark.parametrize("value", ["5", "[a, b]"])
def test_take_over_refuses_a_results_key_that_is_not_a_path(workdir, value):
    (workdir / "config/odd.yaml").write_text(f"results: {value}\n")
    with pytest.raises(configfiles.ConfigFileError, match="config/odd.yaml: config key results"):
        results_folder.take_over(["config/odd.yaml"])


def test_take_over_hands_the_folder_to_the_config_it_names(workdir, capsys):
    (workdir / "config/mine.yaml").write_text("results: results-tiny\nexperiments: {}\n")
    results_folder.claim({"results": "results-tiny"}, ["config/tiny.yaml"], DEFAULT)
    results_folder.main(["take-over", "config/mine.yaml"])
    assert "results-tiny now belongs to config/mine.yaml" in capsys.readouterr().out
    results_folder.check({"results": "results-tiny"}, ["config/mine.yaml"], DEFAULT)
    assert "belongs to the config config/mine.yaml" in refusal(
        {"results": "results-tiny"}, ["config/tiny.yaml"]
    )


def test_take_over_reads_the_results_key_with_its_default(workdir):
    (workdir / "config/a.yaml").write_text("results: results-a\n")
    (workdir / "config/b.yaml").write_text("device: cpu\n")
    assert results_folder.results_of(["config/b.yaml"]) == "results"
    assert results_folder.results_of(["config/a.yaml", "config/b.yaml"]) == "results-a"
    (workdir / "config/yte.yaml").write_text("__use_yte__: true\nresults: results-a\n")
    with pytest.raises(configfiles.ConfigFileError, match="config/yte.yaml is a YTE template"):
        results_folder.take_over(["config/yte.yaml"])


def test_a_copied_non_default_config_is_refused_before_any_job(tmp_path):
    """The issue's case with the real Snakemake: after config/tiny.yaml built (here: its
    record, as the workflow's onstart writes it), a copy with another lr and `results:`
    kept is refused naming the key and the owner, and nothing is written; the copy in a
    folder of its own plans."""
    workdir = copy_project(tmp_path)
    record = workdir / "results-tiny" / results_folder.OWNER_FILE
    record.parent.mkdir()
    record.write_text("config/tiny.yaml\n")
    config = yaml.safe_load((workdir / "config/tiny.yaml").read_text())
    config["experiments"]["fig2"]["optimizers"]["gd"]["lr"] = 2.0
    (workdir / "config/mine.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(workdir, "-c1", config="config/mine.yaml", check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config key results: 'results-tiny' belongs to the config config/tiny.yaml" in out
    assert sorted(p.name for p in record.parent.iterdir()) == [results_folder.OWNER_FILE]
    assert record.read_text() == "config/tiny.yaml\n"
    config["results"] = "results-mine"
    (workdir / "config/mine.yaml").write_text(yaml.safe_dump(config))
    snakemake(workdir, "results-mine/fig2.pdf", "-n", config="config/mine.yaml")


@pytest.mark.slow
def test_two_configs_started_at_once_into_a_fresh_folder_one_is_refused(tmp_path):
    """The race with the real Snakemake: two configs (another lr) with the same `results:`,
    started together on different targets (Snakemake's own lock does not stop them). Before
    the record was taken atomically both ran and the folder ended with both configs'
    files; now one runs and the other is refused before any job, naming the owner."""
    workdir = copy_project(tmp_path)
    config = yaml.safe_load((workdir / "config/tiny.yaml").read_text())
    config["results"] = "results-shared"
    (workdir / "config/a.yaml").write_text(yaml.safe_dump(config))
    config["experiments"]["fig2"]["optimizers"]["gd"]["lr"] = 2.0
    (workdir / "config/b.yaml").write_text(yaml.safe_dump(config))
    runs = {"a": "results-shared/fig2.pdf", "b": "results-shared/gd_vs_ngd.pdf"}
    with ThreadPoolExecutor(2) as pool:
        done = {
            name: pool.submit(snakemake, workdir, target, "-c1", config=f"config/{name}.yaml",
                              check=False)
            for name, target in runs.items()
        }  # fmt: skip
        results = {name: future.result() for name, future in done.items()}
    ran = sorted(n for n, r in results.items() if r.returncode == 0)
    assert len(ran) == 1, {n: r.stderr[-2000:] for n, r in results.items()}
    (winner,) = ran
    loser = "b" if winner == "a" else "a"
    out = " ".join((results[loser].stdout + results[loser].stderr).split())
    # refused naming the owner, or, where it read the record in the instant between the
    # winner's O_EXCL create and its write, naming the run started at the same moment
    assert (f"belongs to the config config/{winner}.yaml" in out) or (
        "has an empty owner record" in out and "started at the same moment" in out
    ), out[-2000:]
    record = workdir / "results-shared" / results_folder.OWNER_FILE
    assert results_folder.read_record(record.read_text())[0] == f"config/{winner}.yaml"
    assert not (workdir / runs[loser]).exists()


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("name: train\nchannels: [conda-forge]\n", "its keys ['channels', 'name'] are not among"),
        ("results: results-tiny\n", "no key experiments"),
    ],
)
def test_take_over_refuses_a_file_that_is_no_config(workdir, text, refusal):
    """A conda env file, or a file of results alone: no config of this workflow, so it may
    not own a folder (issue 61); the control, a config, takes it."""
    (workdir / "config/env.yaml").write_text(text)
    with pytest.raises(configfiles.ConfigFileError, match=re.escape(refusal)):
        results_folder.take_over(["config/env.yaml"])
    assert not (workdir / "results-tiny" / results_folder.OWNER_FILE).exists()
    (workdir / "config/more.yaml").write_text("experiments: {}\n")  # with it: a config
    if "experiments" in refusal:
        results_folder.take_over(["config/env.yaml", "config/more.yaml"])


def test_an_empty_owner_record_names_the_way_out_and_following_it_works(workdir, capsys):
    """A run stopped between creating its record and writing it leaves it empty: the
    refusal says so and names the take-over command, which, run as written, clears it."""
    (workdir / "config/mine.yaml").write_text("results: results-mine\nexperiments: {}\n")
    record = workdir / "results-mine" / results_folder.OWNER_FILE
    record.parent.mkdir()
    record.write_text("")
    message = refusal({"results": "results-mine"}, ["config/mine.yaml"])
    assert "empty owner record" in message and "being recorded" in message
    command = f"{results_folder.COMMAND} config/mine.yaml"
    assert command in message
    results_folder.main(command.split()[3:])  # the advice followed: take-over config/mine.yaml
    results_folder.check({"results": "results-mine"}, ["config/mine.yaml"], DEFAULT)
