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
    share it."""
    from project import copy_project, snakemake
    from shared_build import once_per_run

    def build(workdir):
        copy_project(workdir)
        snakemake(workdir, "-c2", "-q")

    # under pytest-xdist, built once for all workers, each given a copy (shared_build)
    return once_per_run(tmp_path_factory, "project", build)
