"""docs/layout.md's "Adding an optimizer", as the recipe tests follow it
(tests/project/test_adding_an_optimizer.py, test_adding_a_stochastic_optimizer.py): the
page's code blocks, the recipe's two edits in a copy of the project (the module's file and
one config line), and what the copy then differs by."""

from __future__ import annotations

import re
from pathlib import Path

from project import REPO


def section_blocks() -> dict[str, str]:
    """The code blocks of layout.md's "Adding an optimizer", by language tag."""
    text = (REPO / "docs/layout.md").read_text()
    section = text.split("## Adding an optimizer", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"```(\w+)\n(.*?)```", section, flags=re.DOTALL))


def add_rule(workdir: Path, file: str, source: str, config: str, entry: str, line: str) -> None:
    """The recipe's two edits: `source` written to `file`, and `line` under the optimizers
    of the config section whose line starts with `entry` (e.g. "  fig2:"), indented as its
    neighbours; nothing else."""
    (workdir / file).write_text(source)
    path = workdir / config
    lines = path.read_text().splitlines(keepends=True)
    start = next(i for i, text in enumerate(lines) if text.startswith(entry))
    at = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("optimizers:"))
    indent = re.match(r"\s*", lines[at + 1]).group(0)
    lines.insert(at + 1, f"{indent}{line}\n")
    path.write_text("".join(lines))


def differences(workdir: Path, config: str) -> tuple[set[Path], set[Path], list[str]]:
    """(source files only the copy has, source files only the project has, the config
    lines the copy added)."""
    new = {p.relative_to(workdir) for p in (workdir / "src").rglob("*.py")}
    old = {p.relative_to(REPO) for p in (REPO / "src").rglob("*.py")}
    before = (REPO / config).read_text().splitlines()
    after = (workdir / config).read_text().splitlines()
    return new - old, old - new, [line for line in after if line not in before]
