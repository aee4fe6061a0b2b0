"""Which config a results folder belongs to, so that a copied config never overwrites the
default config's figures and claims.

A copy of config/config.yaml keeps `results: results`: run with `--configfile` after a
change (another lr, say), its jobs would rerun and write over the default's results. So
every run records, in `<results>/.attnbias-config`, the config file(s) it ran with
(`claim`, from the workflow's onstart: a dry run writes nothing), and a run with any
other config file is refused, naming the key `results`, where that folder holds the
default config's results (`check`, before any job). A folder of the copy's own takes it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from attnbias.workflow import io
from attnbias.workflow.configcheck import ConfigError

OWNER_FILE = ".attnbias-config"  # in the results folder: the config file(s) that wrote it


def _name(path) -> str:
    """A config file's path relative to the working directory where it lies below it (a
    copied project then still knows its own default), else absolute."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(resolved)


def owner(configfiles: Sequence, default_config) -> str:
    """The config file(s) of a run, one per line: `--configfile`'s, else the default."""
    return "\n".join(_name(p) for p in configfiles) if configfiles else _name(default_config)


def check(config: dict, configfiles: Sequence, default_config) -> None:
    """Refuse a config other than the default whose results folder holds the default's."""
    this, default = owner(configfiles, default_config), _name(default_config)
    path = Path(config["results"]) / OWNER_FILE
    if this == default or not path.is_file() or path.read_text().strip() != default:
        return
    stem = Path(str(configfiles[-1])).stem
    raise ConfigError(
        ("results",),
        f"{config['results']!r} holds the results of the default config, {default}; "
        f"running {', '.join(map(str, configfiles))} there would overwrite its figures and "
        f"claims. Give this config a folder of its own (e.g. results: results-{stem})",
    )


def claim(config: dict, configfiles: Sequence, default_config) -> None:
    """Record the run's config file(s) in its results folder."""
    path = Path(config["results"]) / OWNER_FILE
    text = owner(configfiles, default_config) + "\n"
    if not path.is_file() or path.read_text() != text:
        os.makedirs(path.parent, exist_ok=True)
        io.save_text(path, text)
