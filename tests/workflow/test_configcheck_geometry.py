"""The geometry experiments' config checks (attnbias.workflow.configcheck_geometry)."""

from __future__ import annotations

import copy

import pytest
import yaml
from project import REPO

from attnbias.workflow import configcheck, configcheck_geometry, configkeys

SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())


def config() -> dict:
    """config/tiny_geometry.yaml, validated with its defaults filled in (as common.smk)."""
    from snakemake.utils import validate

    cfg = yaml.safe_load((REPO / "config/tiny_geometry.yaml").read_text())
    configcheck.check(cfg, SCHEMA)
    validate(cfg, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    configcheck.check_workflow(cfg, SCHEMA)
    return cfg


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (lambda e: e.update(norms=["fro", "l1"]), "norms[1]", "l1"),
        (lambda e: e.update(norms=["fro", "l3.0"]), "norms[1]", "'l3'"),
        (lambda e: e.update(norms=["fro", "max", "spectral", "l3"]), "norms", "nuclear"),
        (lambda e: e.pop("norms"), "norms", "names its norms"),
    ],
)
def test_bad_norms_are_refused_naming_the_key(change, key, words):
    cfg = config()
    change(cfg["experiments"]["geometry_example1"])
    with pytest.raises(configkeys.ConfigError) as err:
        configcheck_geometry.check_geometry(cfg)
    assert err.value.key == f"experiments.geometry_example1.{key}"
    assert words in str(err.value)


def test_norms_on_another_layout_are_refused():
    cfg = config()
    other = copy.deepcopy(cfg["experiments"]["geometry_example1"])
    other["layout"] = "fixed_decoder"
    cfg["experiments"]["fig"] = other
    with pytest.raises(configkeys.ConfigError, match="norms belong to layout geometry"):
        configcheck_geometry.check_geometry(cfg)
