"""The geometry experiments' config (layout geometry, key norms): the refusals naming their
key, and what the workflow reads of them (attnbias.workflow.geometry_config): kept out of
the default build and the claims' inputs, their runs' identities hold the norms.
"""

from __future__ import annotations

import yaml
from project import REPO

from attnbias.workflow import configcheck
from attnbias.workflow.config import WorkflowConfig
from attnbias.workflow.geometry_config import GeometryConfig

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def config() -> dict:
    """config/tiny_geometry.yaml, validated with its defaults filled in (as common.smk)."""
    from snakemake.utils import validate

    cfg = yaml.safe_load((REPO / "config/tiny_geometry.yaml").read_text())
    configcheck.check(cfg, SCHEMA)
    validate(cfg, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    configcheck.check_workflow(cfg, SCHEMA)
    return cfg


def test_geometry_experiments_have_no_figure_of_their_own():
    """No results/<name>.pdf and no paper's claims: the geometry figure (in rule all with
    default_build) and its own claims inputs."""
    cfg = config()
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
    cfg = config()
    before = WorkflowConfig(cfg).identity("run", "geometry_example1", 0, "gd")
    cfg["experiments"]["geometry_example1"]["norms"].append("l1.5")
    after = WorkflowConfig(cfg).identity("run", "geometry_example1", 0, "gd")
    assert before["config_sha256"] != after["config_sha256"]


def test_what_a_train_job_reads():
    geometry = GeometryConfig(WorkflowConfig(config()))
    read = geometry.train("geometry_dm")
    assert read["norms"] == ["fro", "max", "spectral", "nuclear", "l3"]
    assert [i["seed"] for i in read["identities"]] == [0]
    assert geometry.svm_file("svm_geometry/{experiment}.npz", "geometry_dm") == [
        "svm_geometry/geometry_dm.npz"
    ]
    # another experiment's train job reads nothing more
    assert geometry.train("fig2") == {} and geometry.svm_file("x/{experiment}", "fig2") == []
