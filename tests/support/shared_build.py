"""The tiny build's tests in one pytest-xdist worker, so that it is built once per run.

Under `pytest -n N --dist loadfile` (pyproject.toml) each test file runs in one worker, a
process with its own session: the session fixture built_project (tests/conftest.py: the
project built on config/tiny.yaml) would be built again by each worker given a file that
uses it. A copy of one build does not serve instead (Snakemake plans a copied build anew:
its records name the folder), and the slow tests change the build while they run. So the
files that use it form one scope, BUILT_PROJECT_FILES, which the scheduler hands to a
single worker, where they run one after the other on one build, as without xdist. A test
file that uses the fixture and is not listed stops the run at collection (unlisted).
"""

from __future__ import annotations

SCOPE = "built_project"
FIXTURE = "built_project"
BUILT_PROJECT_FILES = frozenset(
    {
        "tests/figures/test_style.py",
        "tests/project/test_refusals_in_builds.py",
        "tests/project/test_report.py",
        "tests/project/test_snakefile_build.py",
        "tests/workflow/test_provenance.py",
    }
)


def scope(nodeid: str) -> str:
    """A test's unit of work: its file, or SCOPE for the files that use the tiny build."""
    file = nodeid.split("::", 1)[0]
    return SCOPE if file in BUILT_PROJECT_FILES else file


def unlisted(items) -> list[str]:
    """The files of `items` (pytest's) that use the fixture but are not listed."""
    return sorted(
        {
            item.nodeid.split("::", 1)[0]
            for item in items
            if FIXTURE in getattr(item, "fixturenames", ())
            and item.nodeid.split("::", 1)[0] not in BUILT_PROJECT_FILES
        }
    )


def scheduler(config, log):
    """xdist's file scheduler with the tiny build's files as one scope."""
    from xdist.scheduler import LoadFileScheduling

    class OneScopeForTheBuild(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope(nodeid)

    return OneScopeForTheBuild(config, log)
