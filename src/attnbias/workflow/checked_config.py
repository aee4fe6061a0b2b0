"""The config checks of every Snakemake run, run once per config.

Every `snakemake` invocation, a dry run included, checks the whole config before it builds
anything (run_checks: bad values refused by key, the schema with its defaults filled in,
the sweeps' and robustness constants' grids tried value by value): about half a CPU-second
of the 2 s a dry run may take (docs/speed.md). The checks are a pure function of the config,
the schema, the checking code and the libraries it calls, so `check` keeps the checked
config (defaults filled in, whole floats coerced) in a record named by the sha256 of all
four, and a later run with the same config, schema, code and libraries takes the checked
config from it instead of checking again:

  key     sha256 of FORMAT, the config as loaded (JSON, key order kept), the schema file's
          text, the source of every package module the checks run (codedeps' closure of
          CHECK_MODULES, this module among them) and LIBRARIES' versions. Any change to
          one is another key: it is checked again.
  record  .snakemake/attnbias/checked-config/<key>.json in the working directory (Snakemake's
          own folder; deleting it only costs the checks), written atomically (a temporary
          file, then os.replace); it holds its key and the checked config, and one that
          does not load or names another key is ignored and written again.

Only a config that passed every check is recorded, so a refusal is always the checks' own
(ConfigError naming the key). A config JSON cannot hold exactly (a key that is not a string,
a date, NaN) is checked every time.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path

FORMAT = "attnbias-checked-config/1"
FOLDER = Path(".snakemake") / "attnbias" / "checked-config"
# this module: its closure holds every check run_checks imports (codedeps reads the imports
# inside functions too), so a check added there is in the key
CHECK_MODULES = ("attnbias.workflow.checked_config",)
# validate (snakemake), the schema's validator (jsonschema), the labels' math (matplotlib)
LIBRARIES = ("snakemake", "jsonschema", "matplotlib", "pyyaml")


def run_checks(config: dict, schema_path: Path) -> None:
    """Every check of `config`, in order: bad values refused by key before any job
    (configcheck), then the schema through Snakemake, which fills in the defaults, and the
    checks that read those. A refusal raises configkeys.ConfigError naming its key path."""
    import yaml
    from snakemake.utils import validate

    from attnbias.realdata.config_check import check_real
    from attnbias.studies import robustness_check, sweep_check
    from attnbias.workflow import configcheck

    schema = yaml.safe_load(Path(schema_path).read_text())
    configcheck.check(config, schema)
    validate(config, schema=str(schema_path), set_default=True)
    configcheck.check_workflow(config, schema)
    check_real(config)
    sweep_check.check_sweeps(config, schema)
    robustness_check.check(config, schema)


@cache
def code_version() -> str:
    """sha256 of the checks' source (CHECK_MODULES and what they import; the data
    generators models.generator loads by name, whose defaults the checks read; the
    optimizer rules, which the registry loads by file name) and LIBRARIES' versions."""
    from attnbias.data.models import SEPARATE_GENERATORS
    from attnbias.workflow.codedeps import PACKAGE_DIR, package_module_files

    digest = hashlib.sha256()
    modules = (*CHECK_MODULES, *SEPARATE_GENERATORS.values())
    files = {path for module in modules for path in package_module_files(module)}
    files = sorted(files | {str(p) for p in (PACKAGE_DIR / "optim" / "rules").glob("*.py")})
    for path in files:
        digest.update(Path(path).name.encode() + b"\0" + Path(path).read_bytes() + b"\0")
    for library in LIBRARIES:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}={version}\0".encode())
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


def key(config_json: str, schema_path: Path) -> str:
    digest = hashlib.sha256()
    for part in (FORMAT, config_json, Path(schema_path).read_text(), code_version()):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def check(config: dict, schema_path: Path, folder: Path = FOLDER) -> bool:
    """run_checks on `config` (changed in place: defaults filled in), or its checked form
    from the record of an earlier run with the same key (module doc). True where the
    record served."""
    loaded = _exact_json(config)
    if loaded is None:
        run_checks(config, schema_path)
        return False
    name = key(loaded, schema_path)
    record = Path(folder) / f"{name}.json"
    checked = _read(record, name)
    if checked is not None:
        config.clear()
        config.update(checked)
        return True
    run_checks(config, schema_path)
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
    """Atomically; a folder that cannot be written only costs the next run the checks."""
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=record.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "w") as out:
                out.write(text)
            os.replace(temporary, record)
        finally:
            if os.path.exists(temporary):
                os.remove(temporary)
    except OSError:
        pass
