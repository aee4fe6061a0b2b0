"""A job's params and inputs from its wildcards (attnbias.workflow.job_params and the
claims inputs of attnbias.workflow.config).
"""

from __future__ import annotations

import yaml
from project import REPO

# ---- attnbias.workflow.config: the plain logic behind the rules' params -----------------


def _workflow_config(change=None):
    from snakemake.utils import validate

    from attnbias.workflow.config import WorkflowConfig

    config = yaml.safe_load((REPO / "config/tiny.yaml").read_text())
    if change:
        change(config)
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    return WorkflowConfig(config)


def test_job_params_take_a_jobs_names_from_its_wildcards():
    """attnbias.workflow.job_params: an aggregate's run tables, one per optimizer (synthetic)
    or per optimizer and seed (real data), each with the identity it must hold; a real-data
    job's experiment is its figure."""
    from types import SimpleNamespace

    from attnbias.workflow.job_params import JobParams

    wf = _workflow_config()
    job = JobParams(wf, sweeps=None, robustness=None)
    fig2, fig1 = SimpleNamespace(experiment="fig2"), SimpleNamespace(figure="fig1")
    synthetic = "t/{experiment}/{optimizer}.parquet"
    assert job.run_tables(synthetic)(fig2) == [
        f"t/fig2/{o}.parquet" for o in ("gd", "ngd", "ps", "ngd-mom")
    ]
    identities = job.run_table_identities(synthetic)(fig2)
    assert identities["t/fig2/ngd.parquet"] == wf.seed_identities("run", "fig2", "ngd")
    real = job.run_tables("t/{figure}/{optimizer}/seed{seed}.parquet")(fig1)
    assert real == [f"t/fig1/{o}/seed0.parquet" for o in ("sgd", "sngd", "sps", "adam")]
    sps = job.optimizer(SimpleNamespace(figure="fig1", optimizer="sps"))
    assert sps == wf.optimizer("fig1", "sps") and sps["rule"] == "sps"
    assert job.metrics_identity(fig1) == wf.identity("metrics", "fig1")
    assert job.seeds(fig2) == [0, 1]


def test_claims_inputs_are_named_by_kind_and_experiment():
    wf = _workflow_config()
    inputs = wf.claims_inputs(
        "m/{experiment}", "d/{experiment}", "s/{experiment}", "f/{experiment}/{optimizer}"
    )
    assert inputs["metrics/fig2"] == "m/fig2"
    assert inputs["svm/fig8"] == "s/fig8"
    # u's final state: for the joint-training experiments only (fig3)
    assert sorted(k for k in inputs if k.startswith("final/")) == [
        f"final/fig3/{o}" for o in sorted(["gd", "ngd", "ps", "joint-ngd"])
    ]
    identities = wf.claims_identities(
        "m/{experiment}", "s/{experiment}", "d/{experiment}", "f/{experiment}/{optimizer}"
    )
    assert set(inputs.values()) == set(identities)
