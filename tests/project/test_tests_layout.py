"""The tests are laid out by what they test (docs/layout.md): tests/<package>/test_<module>.py
for src/attnbias/<package>/<module>.py (a sub-package one folder deeper, as
tests/optim/rules/test_adam.py), tests/project/ for checks of the project as a whole. The
folder names the package and the file the module, so no test file may sit anywhere else."""

from __future__ import annotations

from pathlib import Path

from project import REPO

TESTS = REPO / "tests"
SRC = REPO / "src" / "attnbias"
# test modules named after a sub-package's registry (its __init__) rather than one module of it
REGISTRIES = {
    "optim/test_rules.py": "optim/rules/__init__.py",
    "quotes/test_pages.py": "quotes/pages/__init__.py",
}


def misplaced(paths: list[str], src: Path = SRC) -> list[str]:
    """The test files (relative to tests/) that are neither in project/ nor named after a
    module of the package their folder names."""
    wrong = []
    for path in paths:
        parts = path.split("/")
        if parts[0] == "project" and len(parts) == 2:
            continue
        if parts[0] in ("project", "support") or len(parts) < 2:
            wrong.append(path)
            continue
        *folders, name = parts
        module = name.removeprefix("test_")
        target = REGISTRIES.get(path, "/".join([*folders, module]))
        if not (name.startswith("test_") and (src / target).is_file()):
            wrong.append(path)
    return wrong


def _test_files() -> list[str]:
    return sorted(p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py"))


def test_every_test_file_is_named_after_its_module_or_is_the_projects():
    assert misplaced(_test_files()) == []
    assert len(_test_files()) > 100


def test_a_misplaced_test_file_is_reported():
    good = ["model/test_losses.py", "optim/rules/test_adam.py", "project/test_envs.py",
            "optim/test_rules.py"]  # fmt: skip
    bad = [
        "test_losses.py",  # flat in tests/
        "model/test_bad_input.py",  # no module model/bad_input.py
        "model/test_stochastic.py",  # the module is in another package
        "optim/test_adam.py",  # the rule is one folder deeper
        "support/test_project.py",  # the helpers are no tests
        "project/nested/test_x.py",  # project/ is flat
        "nosuch/test_losses.py",  # no package
    ]
    assert misplaced(good + bad) == bad
