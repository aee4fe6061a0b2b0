"""The config files themselves, read as text: a config is code when it is a YTE template.

Snakemake loads every config file through YTE (`snakemake.common.configfile`): a file whose
top level holds `__use_yte__: true` has its `?...` keys and values evaluated as Python. For
a `--configfile` that happens in Snakemake's command line, before the Snakefile runs, so
this module cannot stop it; for the default config (the Snakefile's `configfile:`) it
can, and the Snakefile checks that file before loading it. Either way no job runs: a
template is refused by file name, whatever it evaluated to (docs/running.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

YTE_KEY = "__use_yte__"  # the top-level key that makes a YAML file a YTE template


class ConfigFileError(ValueError):
    """A config file the workflow refuses as a whole; the message names the file."""


def name(path) -> str:
    """A config file's path relative to the working directory where it lies below it (a
    copied project then still knows its own config files), else absolute: how messages
    and results folders' owner records name it."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)


def read_plain(path) -> dict:
    """The config file at `path` as plain YAML (JSON is YAML too), nothing evaluated.

    Raises ConfigFileError naming the file where it is a YTE template, or not a mapping."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise ConfigFileError(f"config file {name(path)}: not readable as YAML ({err})") from None
    if isinstance(data, dict) and YTE_KEY in data:
        raise ConfigFileError(
            f"config file {name(path)} is a YTE template (top-level key {YTE_KEY}): Snakemake "
            "evaluates its ?-expressions as Python when it loads it, so a config file is "
            "code. This workflow runs plain YAML configs only: remove the key and write "
            "the values out, and run only config files you trust (docs/running.md)"
        )
    if not isinstance(data, dict):
        raise ConfigFileError(
            f"config file {name(path)}: holds no mapping of keys at its top level"
        )
    return data


def refuse_templates(paths: Sequence) -> None:
    """Read each config file of a run as text; refuse the first YTE template by name."""
    for path in paths:
        read_plain(path)
