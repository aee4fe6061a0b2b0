"""docs/layout.md is the tree's index: its tree lists every module of the library
(src/attnbias/) and every workflow script (workflow/scripts/), and nothing that is not
there.

The tree is the first code block of docs/layout.md. An entry is the text at the start of a
line, up to the first run of two spaces (the description follows); a name ending in `/` is
a folder, holding the entries indented below it, and entries may share a line, separated
by commas ("npz.py, parquet.py"). A package's __init__.py is listed by its folder.

The optimizer rules' modules (src/attnbias/optim/rules/<rule>.py) are indexed by their
registry (attnbias.optim.rules.MODULES), which the page's tree describes once: the recipe
of "Adding an optimizer" (one file, one config line) needs no edit of this page.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from attnbias.optim import rules

REPO = Path(__file__).resolve().parents[2]
LAYOUT = REPO / "docs" / "layout.md"
INDEXED = ("src/attnbias", "workflow/scripts")
DESCRIPTION_INDENT = 20  # a line indented this far continues a description


def _tree(text: str) -> list[str]:
    """The lines of the first code block."""
    block = re.search(r"^```\n(.*?)^```", text, re.S | re.M)
    assert block, f"{LAYOUT} has no code block holding the tree"
    return block.group(1).splitlines()


def listed_paths(text: str) -> set[str]:
    """Every file path (relative to the repository) that the tree lists."""
    folders: list[tuple[int, str]] = []  # (indent, path) of the open folders
    found = set()
    for line in _tree(text):
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip() or indent >= DESCRIPTION_INDENT:
            continue
        folders = [(i, path) for i, path in folders if i < indent]
        parent = folders[-1][1] if folders else ""
        for name in re.split(r" {2,}", line.strip())[0].split(", "):
            path = parent + name
            if name.endswith("/"):
                folders.append((indent, path))
            else:
                found.add(path)
    return found


def _module_paths() -> set[str]:
    return {
        path.relative_to(REPO).as_posix()
        for root in INDEXED
        for path in (REPO / root).rglob("*.py")
        if path.name != "__init__.py" and "__pycache__" not in path.parts
    }


def _checked(paths) -> set[str]:
    return {p for p in paths if p.startswith(INDEXED)}


def registry_paths(modules: dict[str, str]) -> set[str]:
    """The files of the rules' registry's modules ({rule: module name}, rules.MODULES), as
    the paths of the tree."""
    return {
        Path(sys.modules[module].__file__).resolve().relative_to(REPO).as_posix()
        for module in modules.values()
    }


def test_the_layout_lists_every_module():
    """Every module is listed by the page, or, a rule's, by the registry."""
    indexed = listed_paths(LAYOUT.read_text()) | registry_paths(rules.MODULES)
    missing = _checked(_module_paths()) - indexed
    assert not missing, f"modules that docs/layout.md does not list: {sorted(missing)}"


def test_the_rules_are_indexed_by_their_registry_and_described_once():
    """The registry holds every module of the rules folder (the control of the test above:
    one it did not hold would be missing there), and the page names none of them."""
    folder = {p for p in _module_paths() if p.startswith("src/attnbias/optim/rules/")}
    assert folder and registry_paths(rules.MODULES) == folder
    named = {p for p in listed_paths(LAYOUT.read_text()) if p in folder}
    assert not named, f"docs/layout.md lists rule modules one by one: {sorted(named)}"
    without = {k: v for k, v in rules.MODULES.items() if k != "gd"}
    assert "src/attnbias/optim/rules/gd.py" in folder - registry_paths(without)


def test_the_layout_lists_no_module_that_is_not_there():
    listed = {p for p in listed_paths(LAYOUT.read_text()) if p.endswith(".py")}
    absent = _checked(listed) - _module_paths()
    assert not absent, f"docs/layout.md lists modules that do not exist: {sorted(absent)}"


def test_the_parser_reads_folders_shared_lines_and_descriptions():
    text = (
        "```\n"
        "src/attnbias/              the library\n"
        "  data/                    the datasets\n"
        "    models.py              the models, and a description that runs on to\n"
        "                           a second line naming other.py\n"
        "    idx.py, missing.py     MNIST\n"
        "  optim/                   the optimizers\n"
        "    rules/                 one module each\n"
        "      gd.py                GD\n"
        "    spec.py                settings\n"
        "workflow/scripts/          the entry points\n"
        "  data.py                  the data job\n"
        "```\n"
    )
    assert listed_paths(text) == {
        "src/attnbias/data/models.py",
        "src/attnbias/data/idx.py",
        "src/attnbias/data/missing.py",
        "src/attnbias/optim/rules/gd.py",
        "src/attnbias/optim/spec.py",
        "workflow/scripts/data.py",
    }
