"""docs/layout.md's "Adding an optimizer", as the recipe tests follow it
(tests/project/test_adding_an_optimizer.py, test_adding_a_stochastic_optimizer.py): the
page's code blocks, the recipe's two edits in a copy of the project (the module's file and
one config line), what the copy then differs by, and the tests run in the copy."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
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


# the tests a new rule must pass with no other edit: the optimizers' (no test lists the
# rules by hand) and the page's index of the tree (the registry lists the rule modules)
RECIPE_TESTS = ("tests/optim", "tests/project/test_layout_doc.py")


def recipe_tests_pass(workdir: Path, name: str) -> None:
    """RECIPE_TESTS pass in the copy `workdir`, its src first on the path, whose registry
    holds the rule `name` (checked first: the control)."""
    for folder in ("tests", "docs"):  # the tests read the page's examples
        if not (workdir / folder).exists():
            shutil.copytree(REPO / folder, workdir / folder,
                            ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copy2(REPO / "pyproject.toml", workdir / "pyproject.toml")
    env = dict(os.environ, PYTHONPATH=str(workdir / "src"))
    probe = "from attnbias.optim import rules; print(sorted(rules.RULES))"
    listed = subprocess.run(
        [sys.executable, "-c", probe], cwd=workdir, env=env, capture_output=True, text=True
    )
    assert name in listed.stdout.split("'"), listed.stderr  # the copy's registry holds it
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *RECIPE_TESTS, "-q", "-p", "no:cacheprovider"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert re.search(r"\d+ passed", result.stdout) and " failed" not in result.stdout
