"""A workflow job's files and settings, for the scripts that the hot rules run with `shell:`.

Snakemake's `script:` starts every job by importing its own script machinery and unpickling
the job (about 0.3 s of CPU, measured; see docs/speed.md): more than a data, SVM or
training job's own work. Those rules therefore run

  python <script> '<params JSON>' <threads> <log> input.<name>=<path> ... output.<name>=<path> ...

(workflow/rules/common.smk: job_params, job_shell), and the script reads from `job.load()`
the fields it would read from the `snakemake` object: input, output, log (lists with the
names as attributes; an unnamed file is named by its position), params, wildcards, threads.
A named list of files (a job that makes every seed of an experiment, one file per seed) is
given as `output.<name>[] <path> <path> ...`: its attribute is the list, even of one path.
The params JSON depends on the wildcards only, so Snakemake still reruns a job whose
settings change (it ignores params computed from a job's files or threads).
"""

from __future__ import annotations

import json
import re
import sys
from types import SimpleNamespace


class Files(list):
    """A list of paths whose named entries are also attributes (like Snakemake's)."""

    def __init__(self, items: list, names: dict):
        super().__init__(items)
        self._names = names

    def __getattr__(self, name):
        try:
            return self.__dict__["_names"][name]
        except KeyError:
            raise AttributeError(name) from None


def encode(wildcards, params: dict) -> str:
    """The params JSON that `load` reads."""
    return json.dumps({"wildcards": dict(wildcards.items()), "params": params}, sort_keys=True)


# `input.data=<path>`, `output.metrics[]`: a file's name, or a list's (paths follow it). A
# path always holds a "/" before any "=" (it lies in the results folder), a name never.
_NAME = re.compile(r"^(input|output)(?:\.(\w+))?(\[\]|=)")


def load(argv: list[str] | None = None) -> SimpleNamespace:
    """The job given on the command line (see the module's doc)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 3:
        raise SystemExit(f"usage: {__doc__.splitlines()[6].strip()}")
    spec = json.loads(argv[0])
    files: dict[str, tuple[list, dict]] = {"input": ([], {}), "output": ([], {})}
    items, group = [], None  # the kind's files and the named list that bare paths join
    for arg in argv[3:]:
        named = _NAME.match(arg)
        if not named:
            if group is None:
                raise SystemExit(f"job.load: {arg!r} follows no input.<name>[] or output.<name>[]")
            items.append(arg)
            group.append(arg)
            continue
        kind, name, form = named.groups()
        items, names = files[kind]
        if form == "[]":
            group = names.setdefault(name, []) if name else []
            continue
        group = None
        path = arg[named.end() :]
        items.append(path)
        if name and not name.isdigit():
            names[name] = path
    return SimpleNamespace(
        input=Files(*files["input"]),
        output=Files(*files["output"]),
        log=Files([argv[2]], {}),
        wildcards=SimpleNamespace(**spec["wildcards"]),
        threads=int(argv[1]),
        params=SimpleNamespace(**spec["params"]),
    )
