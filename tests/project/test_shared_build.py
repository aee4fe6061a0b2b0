"""tests/support/shared_build.py: a session fixture's build, once for all xdist workers."""

from __future__ import annotations

import multiprocessing
import time
from functools import partial
from pathlib import Path

import pytest
from shared_build import DONE, once_per_run


class Factory:
    """pytest's tmp_path_factory as a worker sees it: its own base folder under the run's."""

    def __init__(self, run: Path, worker: str):
        self.base = run / worker
        self.base.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def getbasetemp(self) -> Path:
        return self.base

    def mktemp(self, name: str) -> Path:
        self.count += 1
        path = self.base / f"{name}{self.count}"
        path.mkdir()
        return path


def build(folder: Path, log: Path) -> None:
    """Counts its calls in `log` and takes a while, so that a second worker arrives while
    the first builds."""
    with open(log, "a") as f:
        f.write(f"{folder}\n")
    time.sleep(0.3)
    (folder / "result.txt").write_text("built")


def worker(run: Path, name: str, out) -> None:
    import os

    os.environ["PYTEST_XDIST_WORKER"] = name
    out.put(str(once_per_run(Factory(run, name), "project", partial(build, log=run / "log"))))


def test_two_workers_build_once_and_each_gets_its_own_copy(tmp_path):
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(tmp_path, f"gw{i}", out)) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    copies = {Path(out.get(timeout=5)) for _ in procs}
    assert len((tmp_path / "log").read_text().splitlines()) == 1
    assert len(copies) == 2 and all(c.parent.parent.name in ("gw0", "gw1") for c in copies)
    for copy in copies:
        assert (copy / "result.txt").read_text() == "built" and not (copy / DONE).exists()


def test_without_xdist_each_session_builds_its_own(tmp_path, monkeypatch):
    """The control: the counting sees every build (here two sessions, two builds)."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    log = tmp_path / "log"
    for name in ("a", "b"):
        folder = once_per_run(Factory(tmp_path, name), "project", partial(build, log=log))
        assert (folder / "result.txt").read_text() == "built"
    assert len(log.read_text().splitlines()) == 2


def test_a_failed_build_is_built_again_by_the_next_worker(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")

    def failing(folder: Path) -> None:
        (folder / "half.txt").write_text("cut short")
        raise RuntimeError("the build failed")

    with pytest.raises(RuntimeError, match="the build failed"):
        once_per_run(Factory(tmp_path, "gw0"), "project", failing)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    copy = once_per_run(Factory(tmp_path, "gw1"), "project", partial(build, log=tmp_path / "log"))
    assert sorted(p.name for p in copy.iterdir()) == ["result.txt"]  # nothing half-built kept
