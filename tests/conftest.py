"""Shared helpers for the unit tests: the plain (autograd-friendly) risk, and the built project.

The plain risk is `attnbias.model.reference.risk`, written straight from the paper's equations
(docs/model.md) and sharing no code with the package's stable forms, so those are checked
against an independent reference.
"""

from __future__ import annotations

import pytest
import torch

from attnbias.model.reference import plain_risk

# One thread per process was fastest for these small problems (docs/environment.md,
# "Threads"), and it keeps the run times of the long tests stable on a loaded 2-core machine.
torch.set_num_threads(1)

__all__ = ["plain_risk"]


@pytest.fixture
def plain():
    """The plain risk, as a fixture so that test modules need not import conftest."""
    return plain_risk


@pytest.fixture(scope="session")
def built_project(tmp_path_factory):
    """The project copied to a temporary folder and built on config/tiny.yaml, once per
    session: the end-to-end tests (tests/project/test_snakefile_build.py, test_report.py,
    test_refusals_in_builds.py; tests/workflow/test_provenance.py, tests/figures/test_style.py)
    share it. Under pytest-xdist those files run in one worker (shared_build), so that it
    is built once."""
    from project import copy_project, snakemake

    workdir = copy_project(tmp_path_factory.mktemp("project"))
    snakemake(workdir, "-c2", "-q")
    return workdir


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: ignored where it is not installed
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` (pyproject.toml) with the tiny build's files as one unit of work."""
    if config.getvalue("dist") == "loadfile":
        from shared_build import scheduler

        return scheduler(config, log)
    return None


def pytest_collection_modifyitems(config, items):
    from shared_build import unlisted

    files = unlisted(items)
    if files:
        raise pytest.UsageError(
            f"{', '.join(files)} use built_project: add them to BUILT_PROJECT_FILES in "
            "tests/support/shared_build.py (under xdist they must run in one worker)"
        )
