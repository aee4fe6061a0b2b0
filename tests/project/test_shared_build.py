"""tests/support/shared_build.py: the tiny build's test files, one unit of work for xdist."""

from __future__ import annotations

from types import SimpleNamespace

from project import REPO
from shared_build import BUILT_PROJECT_FILES, SCOPE, scope, unlisted


def test_the_builds_files_are_one_scope_and_the_others_their_own():
    for file in BUILT_PROJECT_FILES:
        assert scope(f"{file}::test_x[a-b]") == SCOPE
        assert (REPO / file).exists(), file
    assert scope("tests/svm/test_norms.py::test_x") == "tests/svm/test_norms.py"
    assert scope("tests/svm/test_norms.py") == "tests/svm/test_norms.py"


def test_a_file_using_the_build_unlisted_is_named():
    item = SimpleNamespace
    items = [
        item(nodeid="tests/figures/test_style.py::test_a", fixturenames=["built_project"]),
        item(nodeid="tests/svm/test_new.py::test_b", fixturenames=["tmp_path", "built_project"]),
        item(nodeid="tests/svm/test_new.py::test_c", fixturenames=["built_project"]),
        item(nodeid="tests/svm/test_other.py::test_d", fixturenames=["tmp_path"]),
    ]
    assert unlisted(items) == ["tests/svm/test_new.py"]
    assert unlisted(items[:1] + items[3:]) == []


def test_every_listed_file_uses_the_build():
    """No stale entry (a run refuses an unlisted file itself: conftest.py)."""
    for file in BUILT_PROJECT_FILES:
        assert "built_project" in (REPO / file).read_text(), file
