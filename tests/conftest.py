"""Shared helpers for the unit tests: a plain (autograd-friendly) model of the risk.

The plain implementation below is written straight from SPEC.md ("Model and loss") and
shares no code with the package, so the package's stable forms are checked against an
independent reference.
"""

from __future__ import annotations

import pytest
import torch

# One thread per process was fastest for these small problems (SPEC.md, "Speed"), and it
# keeps the run times of the long tests stable on a loaded 2-core machine.
torch.set_num_threads(1)


def plain_risk(X, y, u, W, loss: str = "exponential"):
    """L(W, u) = mean_i l(y_i u^T X_i^T softmax(X_i W x_i1)), written the obvious way.

    X (n, T, d), y (n,), u (d,), W (d, d): torch tensors. Differentiable by autograd.
    """
    logits = torch.einsum("ntd,de,ne->nt", X, W, X[:, 0, :])
    attn = torch.softmax(logits, dim=-1)
    f = torch.einsum("d,ntd,nt->n", u, X, attn)
    z = y * f
    if loss == "exponential":
        return torch.exp(-z).mean()
    if loss == "logistic":
        return torch.log1p(torch.exp(-z)).mean()
    raise ValueError(loss)


@pytest.fixture
def plain():
    """The plain risk, as a fixture so that test modules need not import conftest."""
    return plain_risk


@pytest.fixture(scope="session")
def built_project(tmp_path_factory):
    """The project copied to a temporary folder and built on config/tiny.yaml, once per
    session: the end-to-end tests (test_workflow, test_report) share it."""
    from project import copy_project, snakemake

    workdir = copy_project(tmp_path_factory.mktemp("project"))
    snakemake(workdir, "-c2", "-q")
    return workdir
