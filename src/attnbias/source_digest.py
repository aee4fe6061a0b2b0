"""The sha256 of some of the package's source files and of libraries' installed versions:
what a cached result is a function of (the checked config's records, workflow.checked_config;
the token sets' SVMs, svm.token_set_cache). Standard library only: the checked config is
keyed on every `snakemake` run, a dry run included, so this must import nothing heavy."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path


def source_digest(files: Iterable[Path], root: Path, libraries: Iterable[str]) -> str:
    """sha256 of each file's path relative to `root` and its bytes, in the order given,
    then of each library's version ("absent" where it is not installed)."""
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(root).as_posix().encode()
        digest.update(name + b"\0" + path.read_bytes() + b"\0")
    for library in libraries:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}={version}\0".encode())
    return digest.hexdigest()
