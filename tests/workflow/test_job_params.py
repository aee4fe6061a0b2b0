"""A job's params and inputs from its wildcards (attnbias.workflow.job_params and the
claims inputs of attnbias.workflow.config).
"""

from __future__ import annotations

from tiny_configs import workflow_config

# ---- attnbias.workflow.config: the plain logic behind the rules' params -----------------


def test_job_params_take_a_jobs_names_from_its_wildcards():
    """attnbias.workflow.job_params: an aggregate's run tables, one per optimizer (synthetic)
    or per optimizer and seed (real data), each with the identity it must hold; a real-data
    job's experiment is its figure."""
    from types import SimpleNamespace

    from attnbias.workflow.job_params import JobParams

    wf = workflow_config()
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
    wf = workflow_config()
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


def test_a_sweep_point_depends_on_its_data_models_own_module():
    """A sweep's point job generates its data itself, so where the data model's generator
    lives apart from attnbias.data.models (bad_direction's, which solves an SVM), that
    module is the job's code too (SweepConfig.loaded_code); fig3's model has none."""
    import copy
    from types import SimpleNamespace

    from tiny_sweep import TINY_SWEEP, tiny

    from attnbias.studies.sweep_config import SweepConfig
    from attnbias.workflow.codedeps import rule_files
    from attnbias.workflow.job_params import JobParams

    config = tiny()
    grid = {"train.iterations": [100]}
    config["sweeps"]["fig8"] = {**copy.deepcopy(TINY_SWEEP), "base": "fig8", "grid": grid}
    sweeps = SweepConfig(config)
    job = JobParams(workflow_config(), sweeps=sweeps, robustness=None)
    fig8 = SimpleNamespace(sweep="fig8", point=next(iter(sweeps.points("fig8"))))
    own = {f.split("attnbias/")[1] for f in job.sweep_code(fig8)}
    assert {"data/bad_direction.py", "svm/max_margin.py"} <= own
    fig3 = SimpleNamespace(sweep="fig3", point=next(iter(sweeps.points("fig3"))))
    # fig3's model has none: its code is its optimizers' rule modules (codedeps.rule_files)
    rules_ = {o["rule"] for o in sweeps.experiment("fig3", fig3.point)["optimizers"].values()}
    assert rules_ and job.sweep_code(fig3) == rule_files(rules_)
    # and the point rule takes it as input (an edit to the module reruns the points)
    from project import REPO

    assert "loaded_code=JOB.sweep_code" in (REPO / "workflow/rules/sweep.smk").read_text()


def test_a_training_job_depends_on_its_optimizers_rule_module_alone():
    """JobParams.rule_code: the module of the rule its optimizer trains with (and what it
    imports), never another rule's (codedeps.rule_files; tests/project/test_snakefile_build.py
    dry-runs an edit)."""
    from types import SimpleNamespace

    from attnbias.optim import rules
    from attnbias.workflow.job_params import JobParams

    job = JobParams(workflow_config(), sweeps=None, robustness=None)
    ps = job.rule_code(SimpleNamespace(experiment="fig2", optimizer="ps"))
    names = {f.split("optim/rules/")[1] for f in ps if "optim/rules/" in f}
    assert names == {"polyak.py"} and rules.MODULES["polyak"].endswith(".polyak")
    sgd = job.rule_code(SimpleNamespace(figure="fig6", optimizer="sgd", seed="1"))
    assert {f.split("optim/rules/")[1] for f in sgd if "optim/rules/" in f} == {"sgd.py"}
