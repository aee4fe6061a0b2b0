"""The config checks of every Snakemake run, run once per config.

Every `snakemake` invocation, a dry run included, checks the whole config before it builds
anything (workflow/rules/common.smk: bad values refused by key, the schema with its defaults
filled in, the sweeps' and robustness constants' grids tried value by value): about a
third of what a dry run spent in the workflow's own code (docs/speed.md). The checks are a
pure function of the config, the schema, the checking code and the libraries it calls, so
`check` keeps the checked config (defaults filled in, whole floats coerced) in a record
named by the sha256 of all four, and a later run with the same four takes the checked
config from it instead of checking again:

  key     sha256 of FORMAT, the config as loaded (JSON, key order kept), the schema file's
          text, every source file of the package (a superset of the checking code: exact
          without following imports; an edit anywhere costs one run its checks), the
          files that say which checks run (common.smk) and LIBRARIES' versions. Any change
          to one is another key: the config is checked again.
  record  checked-config/<key>.json in the compiled kernel's cache folder (cache_folder:
          $ATTNBIAS_CACHE, else ~/.cache/attnbias), so that every checkout and copy of the
          project (the tests' among them) shares it: a record is a function of its key.
          Written atomically (a temporary file, then os.replace); it holds its key and the
          checked config, and one that does not load or names another key is ignored and
          written again. The newest KEEP records are kept; deleting the folder only costs
          the checks.

Only a config that passed every check is recorded, so a refusal is always the checks' own
(ConfigError naming the key). A config JSON cannot hold exactly (a key that is not a string,
a date, NaN) is checked every time.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from attnbias.source_digest import source_digest

FORMAT = "attnbias-checked-config/1"
KEEP = 64
PACKAGE_DIR = Path(__file__).resolve().parents[1]
# validate (snakemake), the schema's validator (jsonschema), the labels' math (matplotlib)
LIBRARIES = ("snakemake", "jsonschema", "matplotlib", "pyyaml")


def cache_folder() -> Path:
    """The compiled kernel's cache folder (training.kernel_library): $ATTNBIAS_CACHE, else
    $XDG_CACHE_HOME/attnbias or ~/.cache/attnbias."""
    if os.environ.get("ATTNBIAS_CACHE"):
        return Path(os.environ["ATTNBIAS_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attnbias"


@cache
def _package_version() -> str:
    """sha256 of every source file of the package and of LIBRARIES' versions."""
    return source_digest(sorted(PACKAGE_DIR.rglob("*.py")), PACKAGE_DIR, LIBRARIES)


def code_version(sources=()) -> str:
    """The package's and libraries' version (_package_version) and the text of `sources`."""
    digest = hashlib.sha256(_package_version().encode())
    for path in sources:
        digest.update(b"\0" + Path(path).read_bytes())
    return digest.hexdigest()


def _exact_json(config: dict) -> str | None:
    """`config` as JSON, or None where JSON would not give it back exactly."""
    try:
        text = json.dumps(config, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return text if _same(json.loads(text), config) else None


def _same(a, b) -> bool:
    """Equal, and of the same types all the way down (1 and 1.0 and True differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def key(config_json: str, schema_path: Path, sources=()) -> str:
    digest = hashlib.sha256()
    for part in (FORMAT, config_json, Path(schema_path).read_text(), code_version(sources)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def check(config: dict, schema_path, run_checks, sources=(), folder=None) -> bool:
    """`run_checks(config)` (which changes `config` in place: defaults filled in), or the
    checked config from the record of an earlier run with the same key (module doc): the
    config, the schema at `schema_path`, the package's source and the files `sources`
    (where run_checks is written); `folder`: the records' (None: cache_folder()'s
    checked-config). True where the record served."""
    loaded = _exact_json(config)
    if loaded is None:
        run_checks(config)
        return False
    name = key(loaded, schema_path, sources)
    folder = cache_folder() / "checked-config" if folder is None else Path(folder)
    record = folder / f"{name}.json"
    checked = _read(record, name)
    if checked is not None:
        config.clear()
        config.update(checked)
        return True
    run_checks(config)
    written = _exact_json(config)
    if written is not None:
        _write(record, json.dumps({"format": FORMAT, "key": name, "config": json.loads(written)}))
    return False


def _read(record: Path, name: str) -> dict | None:
    try:
        stored = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(stored, dict) and stored.get("format") == FORMAT and stored.get("key") == name
    return stored["config"] if ok and isinstance(stored.get("config"), dict) else None


def _write(record: Path, text: str) -> None:
    """Atomically (store.atomic_path: runs in other checkouts may write it at once); a
    folder that cannot be written only costs the next run the checks."""
    from attnbias.workflow.store import atomic_path

    try:
        with atomic_path(record, shared=True) as temporary:
            Path(temporary).write_text(text)
        records = sorted(record.parent.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in records[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
