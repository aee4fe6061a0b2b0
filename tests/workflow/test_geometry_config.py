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
