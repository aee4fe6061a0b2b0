"""Shared by the tests of the two training backends (tests/training/test_kernel.py), of the
dispatcher that picks one (tests/training/test_dispatch.py), of the full-W path
(tests/training/test_full_matrix.py) and of the training job
(tests/workflow/test_train_job.py): small data models, their max-margin solutions, one seed's
run as the job trains it, an extra_metrics hook, and the comparison of two runs' metric
tables."""

from __future__ import annotations

import numpy as np

from attnbias.data import models
from attnbias.svm import max_margin
from attnbias.workflow.train_job import train_seeds

DM = dict(n=8, T=4, d=30, mu_norm=1.0, noise_scale=0.5)
FIG8 = dict(n=4, T=3, d=20, opt_signal=1.0, query_signal=0.5, init_norm=2.0)


def svm_solutions(datasets, train_u):
    """(W_mm, u_mm) stacked over `datasets` (u_mm None without a trained decoder)."""
    arrays = [
        max_margin.to_arrays(max_margin.solve_for_dataset(ds, train_u, "test")) for ds in datasets
    ]
    W_mm = np.stack([a["W_mm"] for a in arrays])
    u_mm = np.stack([a["u_mm"] for a in arrays]) if train_u else None
    return W_mm, u_mm


def assert_tables_agree(ref, got, rel=1e-10):
    """Every metric of `got` equals `ref`'s to `rel` relative, NaN where it is NaN."""
    assert set(got) == set(ref)
    for name in ref:
        assert got[name].shape == ref[name].shape, name
        np.testing.assert_array_equal(np.isnan(got[name]), np.isnan(ref[name]), err_msg=name)
        finite = ~np.isnan(ref[name])
        np.testing.assert_allclose(got[name][finite], ref[name][finite], rtol=rel, err_msg=name)


def example1_problem(train_u: bool, seeds=(0, 1)):
    """example1 datasets of `seeds` (n=6, T=4, d=10) and their stacked W_mm, u_mm."""
    dss = [models.generate("example1", s, dict(n=6, T=4, d=10)) for s in seeds]
    sols = [max_margin.to_arrays(max_margin.solve_for_dataset(ds, train_u, "t")) for ds in dss]
    W_mm = np.stack([s["W_mm"] for s in sols])
    u_mm = np.stack([s["u_mm"] for s in sols]) if train_u else None
    return dss, W_mm, u_mm


def job_alone(dataset, solution, config, spec, **backend):
    """One seed's run of `spec` (an OptimizerSpec) as the job trains it: (iterations,
    metrics, final, record)."""
    its, metrics, finals, info = train_seeds([dataset], [solution], config, spec, **backend)
    return its, metrics[0], finals[0], info


def w_sum_u_first(W, u):
    """An extra_metrics hook: each seed's sum of W and first entry of u."""
    return {"W_sum": W.sum(axis=(1, 2)), "u_first": u[:, 0].copy()}
