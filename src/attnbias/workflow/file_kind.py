"""Open a file only if it is a regular one. A FIFO in a file's place makes open() wait for a
writer and a device (/dev/zero) never ends, so the config files and the pipeline's result
files are checked before opening (os.stat of the resolved path), and again on what was
opened (the path may have changed in between)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

_KINDS = {
    stat.S_ISDIR: "a directory",
    stat.S_ISFIFO: "a FIFO",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def irregular(mode: int) -> str | None:
    """None for a regular file's st_mode; else what the file is, in words ("a FIFO")."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS.items() if test(mode)), "a special file")


def check_regular(path, refuse: Callable[[str], Exception]) -> Path:
    """The resolved `path`, where it is a regular file; else `refuse(kind)` is raised, the
    file unopened. For readers that must open the path themselves (pyarrow: read through a
    Python file object, its reader threads may abort the interpreter at exit)."""
    resolved = Path(path).resolve()
    kind = irregular(os.stat(resolved).st_mode)
    if kind:
        raise refuse(kind)
    return resolved


def open_regular(path, refuse: Callable[[str], Exception]):
    """`path` opened for binary reading where it resolves to a regular file; elsewhere
    `refuse(kind)` is raised ("a FIFO", ...), the file unopened or closed again."""
    resolved = check_regular(path, refuse)
    handle = open(os.open(resolved, os.O_RDONLY | os.O_NONBLOCK), "rb")
    kind = irregular(os.fstat(handle.fileno()).st_mode)
    if kind:
        handle.close()
        raise refuse(kind)
    return handle
