"""The training job (attnbias.workflow.train_job): a batch of seeds, and the extra
metrics passed.
"""

from __future__ import annotations

import numpy as np
import pytest
from backend_runs import DM, example1_problem, job_alone, w_sum_u_first

from attnbias.data import models
from attnbias.optim.spec import OptimizerSpec
from attnbias.svm import max_margin
from attnbias.workflow.train_job import train_seeds


@pytest.mark.parametrize(
    ("model", "params", "train_u", "optimizer"),
    [
        ("example1", dict(n=6, T=4, d=10), False, OptimizerSpec("ngd", lr=0.1)),
        ("example1", dict(n=6, T=4, d=10), False, OptimizerSpec("polyak", eta_max=1e10)),
        ("dm", DM, True, OptimizerSpec("ngd", lr=0.1, momentum=0.5)),
    ],
    ids=["ngd", "polyak", "dm-joint-momentum"],
)
def test_a_training_jobs_batch_of_seeds_gives_each_seeds_run_alone(
    model, params, train_u, optimizer
):
    """train_job.train_seeds (one batch for every seed of the training job) against each
    seed alone: equal to 1e-12 relative, metric by metric."""
    datasets = [models.generate(model, seed, params) for seed in range(3)]
    solutions = [
        max_margin.to_arrays(max_margin.solve_for_dataset(ds, train_u, "t")) for ds in datasets
    ]
    config = dict(iterations=80, log_points=10, grid="log", loss="logistic", train_u=train_u)
    its, batch, batch_final, info = train_seeds(datasets, solutions, config, optimizer)
    assert info["backend"] == "c"
    for k, (ds, solution) in enumerate(zip(datasets, solutions, strict=True)):
        alone_its, alone, alone_final, _ = job_alone(ds, solution, config, optimizer)
        np.testing.assert_array_equal(its, alone_its)
        assert batch[k].keys() == alone.keys()
        for name in alone:
            np.testing.assert_allclose(batch[k][name], alone[name], rtol=1e-12, err_msg=name)
        for name in alone_final:
            np.testing.assert_allclose(batch_final[k][name], alone_final[name], rtol=1e-12)
    # negative control: another seed's run is not this one's
    assert not np.allclose(batch[0]["log_loss"], batch[1]["log_loss"], rtol=1e-12)


# ---------------------------------------------------------------- the full-W path


# ---------------------------------------------------------------- extra_metrics


def test_the_job_passes_extra_metrics():
    dss, W_mm, _ = example1_problem(False)
    train = dict(iterations=20, log_points=4, grid="log", train_u=False, loss="exponential")
    svms = [{"W_mm": W} for W in W_mm]
    _, metrics, finals, _ = train_seeds(dss, svms, train, OptimizerSpec("ngd", lr=0.1),
                                        extra_metrics=w_sum_u_first)  # fmt: skip
    assert metrics[1]["W_sum"][-1] == pytest.approx(finals[1]["W"].sum(), rel=1e-12)
