"""The workflow's config files as the config tests read them: config/tiny.yaml as written
(tiny) and as the workflow reads it (workflow_config), config/tiny_geometry.yaml checked and
validated (checked_tiny_geometry), the config schema (SCHEMA, or a fresh copy: load_schema),
and the values the refusal tests put into a config (NAN, INF, and a label that would end a
<script> element: HOSTILE). For tests/workflow/test_config.py, test_configcheck.py,
test_configcheck_geometry.py, test_configcheck_optimizers.py, test_configcheck_texts.py,
test_configkeys.py, test_geometry_config.py, test_job_params.py, and
tests/project/test_config_schema.py and test_refusals_in_builds.py."""

from __future__ import annotations

import yaml
from project import REPO
from project import SCHEMA as SCHEMA_FILE

from attnbias.workflow import configcheck

NAN, INF = float("nan"), float("inf")


HOSTILE = "GD</script><b id=INJECTED>x</b>"


def load_schema() -> dict:
    """workflow/schemas/config.schema.yaml, read afresh."""
    return yaml.safe_load(SCHEMA_FILE.read_text())


SCHEMA = load_schema()


def tiny() -> dict:
    """config/tiny.yaml as written (no defaults filled in)."""
    return yaml.safe_load((REPO / "config/tiny.yaml").read_text())


def checked_tiny_geometry() -> dict:
    """config/tiny_geometry.yaml, validated with its defaults filled in (as common.smk)."""
    from snakemake.utils import validate

    cfg = yaml.safe_load((REPO / "config/tiny_geometry.yaml").read_text())
    configcheck.check(cfg, SCHEMA)
    validate(cfg, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    configcheck.check_workflow(cfg, SCHEMA)
    return cfg


def workflow_config(change=None):
    """config/tiny.yaml, changed by `change(config)` if given, validated with its defaults
    filled in, as the workflow's WorkflowConfig."""
    from snakemake.utils import validate

    from attnbias.workflow.config import WorkflowConfig

    config = yaml.safe_load((REPO / "config/tiny.yaml").read_text())
    if change:
        change(config)
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    return WorkflowConfig(config)
