"""The config checks run once per config, schema and checking code
(attnbias.workflow.checked_config): a second run with the same config takes the checked
config from the record without checking, anything changed is checked again, a refused
config is never recorded, and a record that is not this key's is ignored."""

from __future__ import annotations

import copy
import json

import pytest
from project import REPO, SCHEMA
from project import checked_config as project_checks
from tiny_configs import tiny

from attnbias.workflow import checked_config
from attnbias.workflow.configkeys import ConfigError

COMMON = REPO / "workflow/rules/common.smk"  # where the workflow lists its checks


@pytest.fixture
def runs():
    """The workflow's checks (tests/support/project.py: common.smk's), and each config they
    checked (as given, before the checks changed it)."""
    checked = []

    def run_checks(config):
        checked.append(copy.deepcopy(config))
        project_checks(config)

    run_checks.checked = checked
    return run_checks


@pytest.fixture
def quick_runs():
    """As runs, with a stand-in for the checks that fills in one default (the record's
    logic does not depend on what the checks do)."""
    checked = []

    def run_checks(config):
        checked.append(copy.deepcopy(config))
        config.setdefault("device", "cpu")

    run_checks.checked = checked
    return run_checks


def _check(config, run_checks, folder, schema=SCHEMA, sources=(COMMON,)):
    return checked_config.check(config, schema, run_checks, sources, folder)


def test_a_second_run_takes_the_checked_config_from_the_record(tmp_path, runs):
    first = tiny()
    assert _check(first, runs, tmp_path) is False
    assert len(runs.checked) == 1 and len(list(tmp_path.glob("*.json"))) == 1
    assert first["device"] and "default_build" in first["experiments"]["fig2"]  # defaults
    second = tiny()
    assert _check(second, runs, tmp_path) is True
    assert len(runs.checked) == 1  # not checked again
    assert checked_config._same(second, first)  # the same values, types and key order


def test_a_changed_config_schema_source_or_package_is_checked_again(
    tmp_path, quick_runs, monkeypatch
):
    _check(tiny(), quick_runs, tmp_path)
    changed = tiny()
    changed["experiments"]["fig2"]["optimizers"]["ngd"]["lr"] = 0.2
    assert _check(changed, quick_runs, tmp_path) is False
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA.read_text() + "\n# another comment\n")
    assert _check(tiny(), quick_runs, tmp_path, schema=schema) is False
    rules = tmp_path / "common.smk"
    rules.write_text(COMMON.read_text() + "\n# another check\n")
    assert _check(tiny(), quick_runs, tmp_path, sources=(rules,)) is False
    monkeypatch.setattr(checked_config, "_package_version", lambda: "other checking code")
    assert _check(tiny(), quick_runs, tmp_path) is False
    assert len(quick_runs.checked) == 5
    assert _check(tiny(), quick_runs, tmp_path) is True  # the control: nothing changed


def test_the_package_version_reads_every_source_file(tmp_path, monkeypatch):
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "check.py").write_text("LIMIT = 1\n")
    monkeypatch.setattr(checked_config, "PACKAGE_DIR", tmp_path)
    version = checked_config._package_version.__wrapped__  # not the process's cached value
    before = version()
    assert version() == before
    (tmp_path / "deep" / "check.py").write_text("LIMIT = 2\n")
    assert version() != before


def test_a_refused_config_is_never_recorded(tmp_path, runs):
    bad = tiny()
    bad["experiments"]["fig2"]["optimizers"]["ngd"]["lr"] = "fast"
    for _ in range(2):  # refused each time, by the checks themselves
        with pytest.raises(ConfigError, match="lr"):
            _check(copy.deepcopy(bad), runs, tmp_path)
    assert len(runs.checked) == 2 and not list(tmp_path.iterdir())


def test_a_record_of_another_key_or_unreadable_is_ignored_and_written_again(tmp_path, quick_runs):
    _check(tiny(), quick_runs, tmp_path)
    (record,) = tmp_path.glob("*.json")
    good = record.read_text()
    stored = json.loads(good)
    forged = dict(copy.deepcopy(stored), key="0" * 64)  # another key's record, this name
    forged["config"]["device"] = "cuda"
    for text in (json.dumps(forged), good[: len(good) // 2], "[]"):
        record.write_text(text)
        config = tiny()
        assert _check(config, quick_runs, tmp_path) is False
        assert config["device"] == stored["config"]["device"]
        assert record.read_text() == good
    assert len(quick_runs.checked) == 4


def test_a_config_json_would_not_give_back_is_checked_every_time(tmp_path, quick_runs):
    """A key that is not a string (YAML allows it) would come back from JSON as a string:
    not recorded (the checks refuse or keep it as they do without the record)."""
    for _ in range(2):
        _check({**tiny(), 1: "a number key"}, quick_runs, tmp_path)
    assert len(quick_runs.checked) == 2 and not list(tmp_path.iterdir())
    assert checked_config._exact_json({"a": 1.0}) is not None
    assert not checked_config._same({"a": 1}, {"a": 1.0})  # an int is not a float


def test_the_test_s_checks_are_the_workflow_s():
    """tests/support/project.py's checks, which these tests run, are common.smk's."""
    import inspect

    body = inspect.getsource(project_checks).split("schema = ", 1)[1]
    listed = [line.strip() for line in body.splitlines()[1:] if line.strip()]
    rules = COMMON.read_text().split("def run_checks(config):", 1)[1]
    assert all(line in rules for line in listed) and len(listed) == 7


def test_the_records_live_in_the_kernel_s_cache_folder_and_the_newest_are_kept(
    tmp_path, quick_runs, monkeypatch
):
    monkeypatch.setenv("ATTNBIAS_CACHE", str(tmp_path / "cache"))
    assert checked_config.cache_folder() == tmp_path / "cache"
    monkeypatch.setattr(checked_config, "KEEP", 2)
    for lr in (0.1, 0.2, 0.3):
        config = tiny()
        config["experiments"]["fig2"]["optimizers"]["ngd"]["lr"] = lr
        checked_config.check(config, SCHEMA, quick_runs, (COMMON,))
    assert len(list((tmp_path / "cache" / "checked-config").glob("*.json"))) == 2
