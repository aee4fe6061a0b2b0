"""Tests never install system packages: without one they skip, with the apt-get line that
installs it as their reason; .ci/run installs every package those tests need."""

from __future__ import annotations

from pathlib import Path

import chromium
import pytest
import slurm_cluster
from project import REPO
from system_packages import PROGRAMS, absent, missing


@pytest.fixture
def empty_path(monkeypatch, tmp_path):
    """A PATH on which no program is found."""
    monkeypatch.setenv("PATH", str(tmp_path))


def test_the_reason_is_the_apt_get_line(empty_path):
    assert chromium.unavailable() == (
        "chromium not installed: sudo apt-get install -y --no-install-recommends chromium"
    )
    assert missing("poppler-utils") == (
        "poppler-utils not installed: sudo apt-get install -y --no-install-recommends poppler-utils"
    )
    with pytest.raises(slurm_cluster.ClusterUnavailable) as error:
        slurm_cluster.check_runnable()
    assert str(error.value) == (
        "slurm-wlm and munge not installed: "
        "sudo apt-get install -y --no-install-recommends slurm-wlm munge"
    )
    assert absent() == list(PROGRAMS)


def test_nothing_is_missing_where_every_program_is_on_path(monkeypatch, tmp_path):
    for program in {p for programs in PROGRAMS.values() for p in programs}:
        (tmp_path / program).write_text("#!/bin/sh\n")
        (tmp_path / program).chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert absent() == [] and missing(*PROGRAMS) is None and chromium.unavailable() is None


def test_ci_installs_what_the_tests_would_skip_without():
    run = (REPO / ".ci/run").read_text()
    assert "missing=$(python tests/support/system_packages.py)" in run
    assert "apt-get install -y -q --no-install-recommends $missing" in run
    # and no other test module runs apt-get (as a command: ["apt-get", ...])
    modules = [p for p in (REPO / "tests").rglob("*.py") if p.name != Path(__file__).name]
    assert [p.name for p in modules if '["apt-get"' in p.read_text().replace(" ", "")] == []
