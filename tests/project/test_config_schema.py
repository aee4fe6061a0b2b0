"""The config schema (workflow/schemas/config.schema.yaml): every key described."""

from __future__ import annotations

from pathlib import Path

import yaml

SCHEMA = "workflow/schemas/config.schema.yaml"


def _undescribed(node, path="", described=frozenset()):
    """Key paths of schema properties without a `description` (a key that an if/then
    branch constrains further is described where it is declared)."""
    if not isinstance(node, dict):
        return
    own = node.get("properties", {})
    for key, sub in own.items():
        if key not in described and "description" not in sub:
            yield f"{path}.{key}"
        yield from _undescribed(sub, f"{path}.{key}")
    described = set(described) | set(own)
    for branch in [*node.get("allOf", []), node.get("then")]:
        yield from _undescribed(branch, path, described)
    for key in ("items", "additionalProperties"):
        yield from _undescribed(node.get(key), f"{path}[]", frozenset())


def test_every_schema_key_is_described():
    schema = yaml.safe_load((Path(__file__).parents[2] / SCHEMA).read_text())
    missing = [*_undescribed(schema)]
    for name, definition in schema["$defs"].items():
        missing += _undescribed(definition, f"$defs.{name}")
    assert not missing, missing
