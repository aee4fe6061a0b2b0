"""Which config owns a results folder: one owner per folder, and no other config writes there.

A copy of a config keeps its `results:`: run with `--configfile` after a change (another
lr, say), its jobs would rerun and write over the original's figures and claims. So every
run records, in `<results>/.attnbias-config`, the config file(s) it ran with (`claim`,
from the workflow's onstart: a dry run writes nothing), and `check` (before any job)
refuses, naming the key `results` and the owner:
- a run whose config file(s) differ from the folder's recorded owner, whatever either is;
- a folder that holds files but no owner record (built before the record existed, or
  copied without it): whose results they are is unknown.
A missing or empty folder is fresh, and the run takes it: atomically, in `claim` (the
record is created only if it does not exist yet), so that of two runs of different configs
started at once into a fresh folder the first wins and the other is refused there, before
any job. A refusal never advises a command that would overwrite another config's results:
it names a folder of the run's own; `take-over` is for a deliberate handover (docs/running.md).

A config is identified by its file's path (relative to the working directory), not its
content: editing the owner in place and rerunning is an incremental rerun (only the jobs
that read the changed values run again), while a copy at another path, however similar,
is another config. The record also keeps the working directory it was written from: two
projects whose `config/config.yaml` write into the same folder (an absolute `results:`)
are two owners; a project copied whole, its results folder inside it, is still one.
`take_over` (the command `python -m attnbias.workflow.results_folder take-over
CONFIGFILE...`) hands a folder to other config files deliberately.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from attnbias.workflow import io
from attnbias.workflow.configfiles import ConfigFileError, name, read_plain
from attnbias.workflow.configkeys import ConfigError

OWNER_FILE = ".attnbias-config"  # in the results folder: the config file(s) that wrote it
COMMAND = "python -m attnbias.workflow.results_folder take-over"
DEFAULT_RESULTS = "results"  # the schema's default of the key `results`
WORKDIR_LINE = "# working directory: "  # the record's last line


def owner(configfiles: Sequence, default_config) -> str:
    """The config file(s) of a run, one per line: `--configfile`'s, else the default."""
    return "\n".join(name(p) for p in configfiles) if configfiles else name(default_config)


def _listed(owner_text: str) -> str:
    return ", ".join(owner_text.splitlines())


def _record_text(this: str) -> str:
    return f"{this}\n{WORKDIR_LINE}{Path.cwd().resolve()}\n"


def read_record(text: str) -> tuple[str, str | None]:
    """(the config file(s), one per line; the working directory they were run from, None
    in a record written before it was kept) of an owner record's text."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    workdirs = [line.removeprefix(WORKDIR_LINE) for line in lines if line.startswith(WORKDIR_LINE)]
    configs = "\n".join(line for line in lines if not line.startswith(WORKDIR_LINE))
    return configs, (workdirs[0] if workdirs else None)


def _read_record_file(config: dict, record: Path) -> str:
    """The owner record's text; a record that is not text (not UTF-8: edited, or another
    program's) refuses the run, naming it: whose results the folder holds is unknown."""
    try:
        return record.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            ("results",),
            f"{config['results']!r} has an owner record {record} that is not UTF-8 text, so "
            "whose results the folder holds is unknown: give this run a folder of its own, or "
            f"remove the record if the results are yours ({COMMAND} records them anew)",
        ) from None


def _same_owner(text: str, this: str, folder: Path) -> bool:
    """Whether the record `text` names this run: its config file(s), from this working
    directory, or from another one where the results folder lies inside this one (a
    project copied whole)."""
    configs, workdir = read_record(text)
    if configs != this:
        return False
    here = Path.cwd().resolve()
    return workdir is None or Path(workdir) == here or folder.resolve().is_relative_to(here)


def _described(text: str) -> str:
    configs, workdir = read_record(text)
    if not configs:
        return "(being recorded)"  # the winner of a race has not written it yet
    elsewhere = workdir is not None and Path(workdir) != Path.cwd().resolve()
    return _listed(configs) + (f" of the working directory {workdir}" if elsewhere else "")


def _holds_files(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())


def check(config: dict, configfiles: Sequence, default_config) -> None:
    """Refuse a run whose results folder belongs to other config files, or holds files
    whose owner is unknown."""
    this = owner(configfiles, default_config)
    folder = Path(config["results"])
    record = folder / OWNER_FILE
    if record.is_file():
        recorded = _read_record_file(config, record)
        if _same_owner(recorded, this, folder):
            return
        raise _taken(config, record, recorded, this)
    if _holds_files(folder):
        raise ConfigError(
            ("results",),
            f"{config['results']!r} holds files but no record of the config that wrote them "
            f"({record} is missing: built before the record existed, or copied without it), "
            f"so running {_listed(this)} there could overwrite another config's figures and "
            f"claims. {_own_folder(this)}",
        )


def _own_folder(this: str) -> str:
    stem = Path(this.splitlines()[-1]).stem
    return f"Give this config a folder of its own (e.g. results: results-{stem})."


def _taken(config: dict, record: Path, recorded: str, this: str) -> ConfigError:
    if not read_record(recorded)[0]:  # empty: being written, or left so by a stopped run
        return ConfigError(
            ("results",),
            f"{config['results']!r} has an empty owner record {record}: its owner is being "
            "recorded by a run started at the same moment, or a run was stopped before it "
            "wrote it. Wait for that run; if none is running and the results are this "
            f"config's, record it as their owner: {COMMAND} {' '.join(this.splitlines())}; "
            f"else {_own_folder(this)[0].lower()}{_own_folder(this)[1:]}",
        )
    return ConfigError(
        ("results",),
        f"{config['results']!r} belongs to the config {_described(recorded)} (recorded in "
        f"{record}); running {_listed(this)} there would overwrite its figures and "
        f"claims. {_own_folder(this)}",
    )


def claim(config: dict, configfiles: Sequence, default_config) -> None:
    """Record the run's config file(s) in its results folder, before any job: created only
    where there is no record (O_EXCL: of two runs started at once the first wins); a record
    of other config files (written since `check` passed) refuses the run."""
    path = Path(config["results"]) / OWNER_FILE
    this = owner(configfiles, default_config)
    os.makedirs(path.parent, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        recorded = _read_record_file(config, path)  # empty: the winner is still writing it
        if not _same_owner(recorded, this, path.parent):
            raise _taken(config, path, recorded, this) from None
        return
    with os.fdopen(descriptor, "w") as handle:
        handle.write(_record_text(this))


def results_of(paths: Sequence) -> str:
    """The `results` folder that config files given together name (the last one that sets
    it, as Snakemake merges them), read as plain YAML (a YTE template is refused)."""
    folders = [(p, read_plain(p).get("results")) for p in paths]
    for path, folder in folders:
        if folder is not None and not isinstance(folder, str):
            raise ConfigFileError(
                f"config file {name(path)}: config key results must be a folder's path, got "
                f"{folder!r}"
            )
    return next((f for _, f in reversed(folders) if f is not None), DEFAULT_RESULTS)


def _check_configs(paths: Sequence) -> None:
    """Refuse files that are no config of this workflow: a mapping of the schema's top-level
    keys (where the schema is found), `experiments` among those of the files together."""
    keys = _top_level_keys()
    given = set()
    for path in paths:
        data = read_plain(path)
        unknown = sorted(str(k) for k in data if keys is not None and k not in keys)
        if unknown:
            raise ConfigFileError(
                f"config file {name(path)}: no config of this workflow (its keys {unknown} "
                f"are not among {sorted(keys)}): pass the config file(s) you run with"
            )
        given |= set(data)
    if "experiments" not in given:
        raise ConfigFileError(
            f"config file(s) {', '.join(name(p) for p in paths)}: no config of this workflow "
            "(no key experiments): pass the config file(s) you run with"
        )


def _top_level_keys() -> set | None:
    """The schema's top-level keys: the working directory's workflow/ (the command runs
    there), else the repository's of this package; None where neither is found."""
    schema = Path("workflow/schemas/config.schema.yaml")
    for path in (schema, Path(__file__).resolve().parents[3] / schema):
        if path.is_file():
            import yaml

            return set(yaml.safe_load(path.read_text())["properties"])
    return None


def take_over(paths: Sequence) -> Path:
    """Record `paths` (config files, run together) as the owner of the folder they name;
    return the folder. Files that are no config are refused (_check_configs)."""
    folder = Path(results_of(paths))
    _check_configs(paths)
    os.makedirs(folder, exist_ok=True)
    io.save_text(folder / OWNER_FILE, _record_text(owner(paths, None)))  # over any record
    return folder


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=COMMAND.removesuffix(" take-over"),
        description="Hand a results folder to config files (run from the working directory "
        "of the workflow): later runs of any other config there are refused.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    take = commands.add_parser("take-over", help="record CONFIGFILE... as the folder's owner")
    take.add_argument("configfiles", nargs="+", metavar="CONFIGFILE")
    args = parser.parse_args(argv)
    try:
        folder = take_over(args.configfiles)
    except ConfigFileError as err:
        parser.exit(1, f"error: {err}\n")
    print(f"{folder} now belongs to {_listed(owner(args.configfiles, None))}")


if __name__ == "__main__":
    main()
