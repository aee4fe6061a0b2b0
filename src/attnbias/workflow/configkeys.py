"""A config's key paths: the ConfigError that names one, and the walk over every value.

A leaf (no imports from the package), so that configcheck and its parts raise the one error
type, which callers import from here.
"""

from __future__ import annotations

from collections.abc import Iterator

# The deepest a config may nest (mappings and lists, the top level counted as 1): the default
# config nests 7 deep. Far below what recursive code (PyYAML's composer, Snakemake's loader,
# the schema's validator, walk below) survives: a list 1,000 deep is refused by key path
# (configcheck.check_keys) or by file and line (configfiles), never by a RecursionError.
MAX_DEPTH = 32


class ConfigError(ValueError):
    """A config value that the workflow refuses; the message names its key path."""

    def __init__(self, path, message: str):
        self.key = key_path(path)
        super().__init__(f"config key {self.key}: {message}")


def key_path(path) -> str:
    """('experiments', 'fig2', 'seeds') -> 'experiments.fig2.seeds'; list items as [i]."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def walk(value, path=()) -> Iterator[tuple[tuple, object]]:
    """(path, value) of `value` and of everything inside it, depth first."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from walk(item, (*path, i))
