"""The svm_geometry job's pieces (workflow/scripts/svm_geometry.py: attnbias.svm.geometry
and attnbias.workflow.svm_job) and its file's reader (svm_geometry_file.load_svm_geometry), which
re-checks every stored solution's KKT conditions."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import geometry
from attnbias.workflow import npz, store, svm_job
from attnbias.workflow.config import WorkflowConfig
from attnbias.workflow.svm_geometry_file import GeometrySVMs, load_svm_geometry

pytest.importorskip("cvxpy")

SEEDS = (0, 1)
NORMS = ["fro", "max", "nuclear", "l3"]
CONFIG = {"tiny": True}


def _identities(kind: str) -> list[dict]:
    return [store.identity(kind, "tiny", CONFIG, seed=s) for s in SEEDS]


def _job(tmp_path, train_u: bool):
    """What svm_geometry.py's snakemake object holds, with a data file of two seeds."""
    data = tmp_path / "data.npz"
    datasets = {
        s: models.example1(np.random.default_rng(s), n=5, T=3, d=4, query_signal=0.2) for s in SEEDS
    }
    npz.save_seeds(data, datasets, {i["seed"]: i for i in _identities("data")})
    return SimpleNamespace(
        input=SimpleNamespace(data=str(data)),
        output=[str(tmp_path / "svm_geometry.npz")],
        params=SimpleNamespace(
            data=_identities("data"),
            identities=_identities("svm_geometry"),
            norms=NORMS,
            train_u=train_u,
        ),
        wildcards=SimpleNamespace(experiment="tiny"),
    )


def _run(job):
    """workflow/scripts/svm_geometry.py's body."""

    def solve(dataset, name):
        p = job.params
        solved, faces, lines = geometry.timed_solve(dataset, p.norms, p.train_u, name)
        return geometry.to_arrays(solved, faces), lines

    solutions, datasets = svm_job.solve_every_seed(job, solve)
    svm_job.save(job, solutions)
    return datasets


@pytest.mark.parametrize("train_u", [False, True])
def test_the_file_holds_every_norms_solution_and_reads_back_checked(tmp_path, train_u):
    job = _job(tmp_path, train_u)
    datasets = _run(job)
    read = load_svm_geometry(job.output[0], datasets, NORMS, train_u, _identities("svm_geometry"))
    assert list(read) == list(SEEDS)
    for seed in SEEDS:
        assert set(read[seed]) == set(geometry.keys(NORMS, train_u))
        assert read[seed]["W_max"].shape == (4, 4)
        assert (read[seed]["u_l3"].shape == (4,)) if train_u else "u_l3" not in read[seed]
        assert float(read[seed]["W_nuclear_residual"]) <= 1e-6
    # the other token sets' SVMs are shared beside the file, by every job that reads it
    svms = GeometrySVMs.load(job.output[0], datasets, NORMS, train_u, _identities("svm_geometry"))
    assert svms.cache.folder == tmp_path / "token_sets"
    assert svms.solutions[1]["max"].tobytes() == read[1]["W_max"].tobytes()


def test_a_solution_that_is_not_optimal_is_refused_by_seed(tmp_path):
    """Another norm's solution stored as the max norm's, its checksum rewritten as our own
    writer would: the store accepts the file, the KKT check refuses it."""
    job = _job(tmp_path, False)
    datasets = _run(job)
    groups = npz.load_seeds(job.output[0])
    groups[1]["W_max"] = groups[1]["W_fro"]
    npz.save_seeds(job.output[0], groups, {i["seed"]: i for i in _identities("svm_geometry")})
    with pytest.raises(store.FileContractError, match=r"seed 1: W_max: .*not optimal"):
        load_svm_geometry(job.output[0], datasets, NORMS, False, _identities("svm_geometry"))


def test_a_file_of_other_norms_is_refused(tmp_path):
    job = _job(tmp_path, False)
    datasets = _run(job)
    with pytest.raises(store.FileContractError, match="lacks \\['W_spectral'"):
        load_svm_geometry(job.output[0], datasets, ["spectral"], False)


def test_an_experiment_without_norms_is_named():
    wf = WorkflowConfig.__new__(WorkflowConfig)
    wf.experiments = {"fig2": {"train": {"train_u": False}}}
    with pytest.raises(ValueError, match="experiments.fig2 has no `norms`"):
        wf.norms("fig2")
