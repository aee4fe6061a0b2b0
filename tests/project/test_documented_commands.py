"""The documented commands run as written: every `snakemake ...` command quoted in
the config files' comments (config/*.yaml) and in the Markdown (docs/*.md, README.md,
config/README.md; code spans and fenced blocks) is dry-run in a copy of the project, so a
command Snakemake would read otherwise than the text means fails here. The case that
started it: a target after `--configfile`, which Snakemake reads as a second config file.

A command that builds is run with `-n` added (a dry run: the whole DAG, its targets and
config, nothing built); one that builds nothing (`--lint`, `--unlock`) as written. A
documented placeholder (`<file>`, `[targets]`) is run with the example in EXAMPLES; the
commands not run are in NOT_RUN, each with its reason, and pytest lists them as skipped."""

from __future__ import annotations

import functools
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from project import REPO, copy_project, snakemake

SPAN = re.compile(r"`([^`]+)`")  # a Markdown code span, or a quoted command in a comment
COMMAND = re.compile(r"snakemake(\s|$)")
# a command in a fenced block: from `snakemake` to the line's end, a `#`, or the next command
FENCED = re.compile(r"(?:^|&&|;|\|\|)\s*(snakemake(?:\s[^&;#|]*)?)")
BUILDS_NOTHING = {"--lint", "--list-rules", "--unlock"}  # run as written: no -n needed
DRY = {"-n", "--dry-run", "--dryrun"}

# documented with a placeholder: what the test runs instead
EXAMPLES = {
    "snakemake --forcerun <file>": "snakemake --forcerun results/svm/fig2.npz",
    "snakemake --profile profiles/local [targets]": (
        "snakemake --profile profiles/local results/fig3.pdf"
    ),
    "snakemake --profile profiles/slurm [targets]": (
        "snakemake --profile profiles/slurm results/fig3.pdf"
    ),
    "snakemake -c2 results/sweeps/<name>.pdf": "snakemake -c2 results/sweeps/fig3.pdf",
    # docs/studies.md's worked example: its sweep added to a copy of the default config (the
    # page's own alternative to editing it), WORKED_EXAMPLE in the project copy
    "snakemake -c2 results/sweeps/ngd_vs_signal.pdf": (
        "snakemake -c2 results/sweeps/ngd_vs_signal.pdf --configfile config/worked_example.yaml"
    ),
}
WORKED_EXAMPLE = ("docs/studies.md", "ngd_vs_signal", "config/worked_example.yaml")

# documented commands the test does not run, and why
REPORT = (
    "reports on built results, and has no dry run (Snakemake refuses it unbuilt: 'marked "
    "for report but does not exist'); tests/project/test_report.py (slow) builds the tiny config "
    "and makes its report"
)
NOT_RUN = {
    "snakemake --report": REPORT,
    "snakemake --report results/report.html": REPORT,
}
if not (shutil.which("conda") or shutil.which("mamba")):
    NOT_RUN["snakemake --sdm conda"] = (
        "needs conda or mamba, not installed here (even a dry run asks `conda info`); "
        "tests/project/test_envs.py checks the envs statically"
    )


def _yaml_comments(text: str) -> list[str]:
    """Each run of consecutive comment lines as one line of text (a command may wrap)."""
    blocks, block = [], []
    for line in text.splitlines():
        found = re.search(r"(?:^|\s)#\s?(.*)$", line)
        if found:
            block.append(found[1])
        elif block:
            blocks.append(" ".join(block))
            block = []
    return [*blocks, " ".join(block)] if block else blocks


def _markdown_commands(text: str) -> list[str]:
    """The `snakemake` commands in code spans (a paragraph joined: a span may wrap) and in
    fenced blocks (line by line, a command or a quoted one)."""
    found, paragraph, fenced = [], [], False

    def close() -> None:
        found.extend(SPAN.findall(" ".join(paragraph)))
        paragraph.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            close()
            fenced = not fenced
        elif fenced:  # a command on its own, or quoted in a block's prose (a tree's notes)
            found.extend(match[1] for match in FENCED.finditer(line))
            found.extend(SPAN.findall(line))
        elif line.strip():
            paragraph.append(line.strip())
        else:
            close()
    close()
    return found


def documented() -> dict[str, list[str]]:
    """Each documented `snakemake` command (whitespace collapsed) -> the files quoting it."""
    sources = {}
    for path in sorted(REPO.glob("config/*.yaml")):
        spans = [s for block in _yaml_comments(path.read_text()) for s in SPAN.findall(block)]
        sources[path] = spans
    for path in [*sorted(REPO.glob("docs/*.md")), REPO / "README.md", REPO / "config/README.md"]:
        sources[path] = _markdown_commands(path.read_text())
    commands: dict[str, list[str]] = {}
    for path, spans in sources.items():
        for span in spans:
            command = " ".join(span.split())
            if COMMAND.match(command):
                commands.setdefault(command, []).append(str(path.relative_to(REPO)))
    return commands


DOCUMENTED = documented()


def run_args(command: str) -> list[str]:
    """The arguments the test runs for a documented command: its example where it has a
    placeholder, `-n` added where it would build."""
    args = shlex.split(EXAMPLES.get(command, command))[1:]
    if not (set(args) & (DRY | BUILDS_NOTHING)):
        args = ["-n", *args]
    return args


# Snakemake's own parser, run in a child process: importing snakemake.cli here loads its
# plugins into the test process, after which cvxpy's OSQP crashed (SIGSEGV) in a later
# test of the same session (tests/svm/test_max_margin.py)
PARSE = """
import json, re, sys
from snakemake.cli import get_argument_parser
out = []
for args in json.load(sys.stdin):
    try:
        settings = vars(get_argument_parser().parse_args(args))
    except SystemExit:
        out.append(None)
        continue
    targets = list(settings.pop("targets") or [])
    out.append([targets, re.sub(r" at 0x[0-9a-f]+", "", repr(sorted(settings.items())))])
json.dump(out, sys.stdout)
"""


def _parsed(arg_lists: list[list[str]]) -> list[tuple[list[str], str] | None]:
    """For each of `arg_lists`: (targets, every other setting) as Snakemake's own parser
    reads it; None where it does not parse."""
    found = subprocess.run([sys.executable, "-c", PARSE], input=json.dumps(arg_lists),
                           capture_output=True, text=True, check=True)  # fmt: skip
    return [None if p is None else (p[0], p[1]) for p in json.loads(found.stdout)]


def dry_runs(commands) -> dict[str, list[str]]:
    """Each command -> the arguments of the run that checks it. Commands that differ only
    in their targets, as Snakemake's parser reads them, share one dry run of all their
    targets (a run per command is 2 s of Snakemake's start), where the parser reads the
    joined arguments so too; any other command has a run of its own."""
    runs, groups = {}, {}
    commands = list(commands)
    every = [run_args(c) for c in commands]
    for command, args, parsed in zip(commands, every, _parsed(every), strict=True):
        if parsed is None or not parsed[0]:  # no target: rule all, not to be joined
            runs[command] = args
            continue
        groups.setdefault(parsed[1], []).append((command, args, parsed[0]))
    joined = {}
    for settings, members in groups.items():
        options = [a for a in members[0][1] if a not in members[0][2]]
        targets = list(dict.fromkeys(t for *_, found in members for t in found))
        joined[settings] = (targets, [*options, *targets])
    checks = _parsed([args for _, args in joined.values()])
    for (settings, (targets, args)), check in zip(joined.items(), checks, strict=True):
        same = check == (targets, settings)
        for command, own, _ in groups[settings]:
            runs[command] = args if same else own
    return runs


@functools.cache
def planned_runs() -> dict[str, list[str]]:
    """dry_runs of every documented command that runs, worked out once, when first asked
    (not at collection: a session that runs none of these tests starts no parser)."""
    return dry_runs(c for c in sorted(DOCUMENTED) if c not in NOT_RUN)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The project copied once, with what the documented commands name beside the workflow:
    its profiles (profiles/default is the workflow profile every run uses) and .test."""
    workdir = copy_project(tmp_path_factory.mktemp("documented"))
    for extra in ("profiles", ".test"):
        shutil.copytree(REPO / extra, workdir / extra)
    page, sweep, config = WORKED_EXAMPLE
    blocks = re.findall(r"```yaml\n(.*?)```", (REPO / page).read_text(), re.S)
    (block,) = [b for b in map(yaml.safe_load, blocks) if sweep in b.get("sweeps", {})]
    default = yaml.safe_load((REPO / "config/config.yaml").read_text())
    default["sweeps"][sweep] = block["sweeps"][sweep]
    (workdir / config).write_text(yaml.safe_dump(default, sort_keys=False))
    return workdir


def test_the_documents_quote_commands_and_the_lists_name_only_quoted_ones():
    """Commands are found at all (the extraction works), each placeholder has its example,
    and no example or reason is kept for a command no document quotes any more."""
    assert len(DOCUMENTED) >= 20, sorted(DOCUMENTED)
    assert "snakemake -c2 --configfile config/tiny.yaml" in DOCUMENTED  # README, a code span
    # config/tiny_geometry.yaml's, wrapped over two comment lines
    assert DOCUMENTED[
        "snakemake -c2 results-tiny-geometry/geometry.pdf --configfile config/tiny_geometry.yaml"
    ] == ["config/tiny_geometry.yaml"]
    for command in DOCUMENTED:
        if re.search(r"<[^>]*>|\[[^]]*\]", command) and command not in NOT_RUN:
            assert command in EXAMPLES, f"{command} (in {DOCUMENTED[command]}): add an example"
    stale = (set(EXAMPLES) | set(NOT_RUN)) - set(DOCUMENTED)
    assert not stale, f"no document quotes {sorted(stale)} any more: remove them from the lists"


_DONE: dict[tuple[str, ...], object] = {}  # a run's arguments -> its result


def _run(project: Path, args: list[str]):
    if tuple(args) not in _DONE:
        _DONE[tuple(args)] = snakemake(project, *args, config=None, check=False)
    return _DONE[tuple(args)]


@pytest.mark.parametrize("command", sorted(DOCUMENTED))
def test_a_documented_command_dry_runs(project, command):
    if command in NOT_RUN:
        pytest.skip(f"{command}: {NOT_RUN[command]}")
    planned = planned_runs()[command]
    result = _run(project, planned)
    if result.returncode != 0 and planned != run_args(command):
        result = _run(project, run_args(command))  # the shared run failed: this one alone
    assert result.returncode == 0, (
        f"`{command}` (in {', '.join(sorted(set(DOCUMENTED[command])))}) fails as "
        f"`snakemake {shlex.join(run_args(command))}`:\n{result.stdout[-3000:]}\n"
        f"{result.stderr[-3000:]}"
    )


def test_a_target_after_configfile_fails_the_check(project):
    """What the test is for: Snakemake reads a word after `--configfile` as another config
    file, so the command as it once stood in config/tiny_geometry.yaml fails its dry run."""
    misread = (
        "snakemake -c2 --configfile config/tiny_geometry.yaml results-tiny-geometry/geometry.pdf"
    )
    result = snakemake(project, *run_args(misread), config=None, check=False)
    assert result.returncode != 0
    assert "results-tiny-geometry/geometry.pdf" in result.stdout + result.stderr
