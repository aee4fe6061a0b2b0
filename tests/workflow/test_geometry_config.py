"""The geometry experiments' config (layout geometry, key norms): the refusals naming their
key, and what the workflow reads of them (attnbias.workflow.geometry_config): kept out of
the default build and the claims' inputs, their runs' identities hold the norms.
"""

from __future__ import annotations

from tiny_configs import checked_tiny_geometry

from attnbias.workflow.config import WorkflowConfig
from attnbias.workflow.geometry_config import GeometryConfig


def test_geometry_experiments_have_no_figure_of_their_own():
    """No results/<name>.pdf and no paper's claims: the geometry figure (in rule all with
    default_build) and its own claims inputs."""
    cfg = checked_tiny_geometry()
    wf = WorkflowConfig(cfg)
    assert list(wf.geometry) == ["geometry_example1", "geometry_dm"] and not wf.default
    assert wf.claims_settings() == {} and wf.claims_inputs("{experiment}", "", "", "") == {}
    geometry = GeometryConfig(wf)
    assert geometry.targets("geometry.pdf") == ["geometry.pdf"]
    assert geometry.claims_inputs("{experiment}.parquet") == {
        "geometry/geometry_example1": "geometry_example1.parquet",
        "geometry/geometry_dm": "geometry_dm.parquet",
    }
    for e in cfg["experiments"].values():
        e["default_build"] = False
    geometry = GeometryConfig(WorkflowConfig(cfg))
    assert geometry.targets("geometry.pdf") == [] and geometry.claims_inputs("{experiment}") == {}
    assert geometry.claims_built("/nonexistent/{experiment}") == {}


def test_a_geometry_runs_identity_holds_its_norms():
    cfg = checked_tiny_geometry()
    before = WorkflowConfig(cfg).identity("run", "geometry_example1", 0, "gd")
    cfg["experiments"]["geometry_example1"]["norms"].append("l1.5")
    after = WorkflowConfig(cfg).identity("run", "geometry_example1", 0, "gd")
    assert before["config_sha256"] != after["config_sha256"]


def test_what_a_train_job_reads():
    geometry = GeometryConfig(WorkflowConfig(checked_tiny_geometry()))
    read = geometry.train("geometry_dm")
    assert read["norms"] == ["fro", "max", "spectral", "nuclear", "l3"]
    assert [i["seed"] for i in read["identities"]] == [0]
    assert geometry.svm_file("svm_geometry/{experiment}.npz", "geometry_dm") == [
        "svm_geometry/geometry_dm.npz"
    ]
    # another experiment's train job reads nothing more
    assert geometry.train("fig2") == {} and geometry.svm_file("x/{experiment}", "fig2") == []


def test_tokens_selected_reaches_the_train_job_the_figure_and_the_run_identity():
    """`tokens: selected` is what the train job and the figure read, and a part of the
    run's identity (its runs retrain); absent, the identity is the one it had before the key
    existed (the control: setting it changes it). The figure names a data model with
    queries cross-attention, the others self-attention."""
    cfg = checked_tiny_geometry()
    before = WorkflowConfig(cfg).identity("run", "geometry_example1", 0, "gd")
    plain = GeometryConfig(WorkflowConfig(cfg))
    assert plain.train("geometry_example1")["tokens"] == "optimal"
    cfg["experiments"]["geometry_example1"]["tokens"] = "selected"
    cfg["experiments"]["geometry_example1"]["data"] = {"model": "cross_gaussian", "params": {}}
    wf = WorkflowConfig(cfg)
    geometry = GeometryConfig(wf)
    assert geometry.train("geometry_example1")["tokens"] == "selected"
    figure = geometry.figure()
    assert figure["geometry_example1"]["tokens"] == "selected"
    assert figure["geometry_example1"]["attention"] == "cross"
    assert figure["geometry_dm"]["attention"] == "self"
    assert geometry.claims_settings("geometry_example1")["tokens"] == "selected"
    after = wf.identity("run", "geometry_example1", 0, "gd")
    assert before["config_sha256"] != after["config_sha256"]
    cfg["experiments"]["geometry_example1"].pop("tokens")
    without = WorkflowConfig(cfg).identity("run", "geometry_example1", 0, "gd")
    cfg["experiments"]["geometry_example1"]["tokens"] = "optimal"  # the default, written out
    written = WorkflowConfig(cfg).identity("run", "geometry_example1", 0, "gd")
    assert without["config_sha256"] == written["config_sha256"] != after["config_sha256"]


def test_the_config_s_cross_attention_map_is_selected_tokens_on_data_with_queries():
    """config/config.yaml's geometry_cross: the neighbours' data model (with queries), a
    fixed decoder, measured against each run's selected tokens, the other geometry
    experiments' optimizer set, and a tuning seed below the reported ones."""
    import yaml
    from project import REPO
    from snakemake.utils import validate
    from tiny_configs import SCHEMA

    from attnbias.workflow import configcheck

    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    configcheck.check(cfg, SCHEMA)
    validate(cfg, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    configcheck.check_workflow(cfg, SCHEMA)
    wf = WorkflowConfig(cfg)
    geometry = GeometryConfig(wf)
    e = geometry.experiments["geometry_cross"]
    assert e["data"]["model"] == "cross_gaussian" and not e["train"]["train_u"]
    assert geometry.tokens("geometry_cross") == "selected"
    assert geometry.figure()["geometry_cross"]["attention"] == "cross"
    assert set(e["optimizers"]) == set(geometry.experiments["geometry_example1"]["optimizers"])
    assert e["tuning_seed"] < e["first_seed"]
    assert geometry.tokens("geometry_example1") == geometry.tokens("geometry_dm") == "optimal"
