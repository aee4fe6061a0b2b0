"""A session fixture's build done once for every pytest-xdist worker of a run.

Under `pytest -n N` each worker is a process with its own session, so a session-scoped
fixture that builds something (the tiny build: tests/conftest.py's built_project) would
build it once per worker that asks for it. `once_per_run` builds it once, in a folder that
the run's workers share (their base temporary folders' parent), under a file lock; each
worker then takes a copy of its own (mtimes kept, so Snakemake sees it up to date), which
its tests may change without touching another worker's. Without xdist it builds in the
session's own temporary folder, as a plain session fixture does.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

DONE = ".built"  # written last: a folder without it is a build that failed or was cut short


def once_per_run(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `build(folder)` fills, built once per run (module doc); `name` names it."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    shared = tmp_path_factory.getbasetemp().parent / f"shared-{name}"
    with open(shared.with_name(shared.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other workers wait here while one builds
        if not (shared / DONE).exists():
            shutil.rmtree(shared, ignore_errors=True)  # a failed build: again, its error raised
            shared.mkdir()
            build(shared)
            (shared / DONE).touch()
    own = tmp_path_factory.mktemp(name) / name
    shutil.copytree(shared, own, symlinks=True, ignore=shutil.ignore_patterns(DONE))
    return own
