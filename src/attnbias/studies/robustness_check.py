"""The refusals of `claims_robustness` (the constants the paper lost and we chose), run
before any job (common.smk, after the sweeps' checks). Each names its key path under
`claims_robustness.constants.<name>`: an experiment that is not of the default build (nor a
geometry experiment, whose claims results/geometry.pdf's tables give), a key
path it lacks or a value it refuses (as a sweep's grid: sweep_check.check_grid), key paths
that hold different values (a constant is one value, unless `together`: ours is then the
first key path's), values without ours, a plausible range
without ours or upside down, and a kind of test that no counted row has.
"""

from __future__ import annotations

from attnbias.claims.claim import KINDS
from attnbias.studies import sweep_check
from attnbias.workflow.config import at
from attnbias.workflow.configkeys import ConfigError

# the kinds of test a constant may be read on: those of the counted rows
COUNTED_KINDS = tuple(k for k in KINDS if k not in ("consistency", "not measured"))


def check(config: dict, schema: dict) -> None:
    """Every constant; a refusal is a configkeys.ConfigError naming its key path."""
    section = config.get("claims_robustness") or {}
    for name, entry in (section.get("constants") or {}).items():
        path = ("claims_robustness", "constants", name)
        ours = _check_set(config, entry, schema, path)
        values = entry["values"]
        if ours not in values:
            raise ConfigError(
                (*path, "values"), f"must hold ours, the config's value {ours!r} ({values})"
            )
        if len(set(values)) < len(values):
            raise ConfigError((*path, "values"), f"a value appears twice ({values})")
        low, high = entry["plausible"]
        if not low <= ours <= high:
            raise ConfigError(
                (*path, "plausible"),
                f"[{low!r}, {high!r}] must be a range [low, high] holding ours ({ours!r})",
            )
        for i, kind in enumerate(entry.get("kinds") or []):
            if kind not in COUNTED_KINDS:
                raise ConfigError(
                    (*path, "kinds", i), f"{kind!r} is no kind of counted test {COUNTED_KINDS}"
                )


def _check_set(config: dict, entry: dict, schema: dict, path: tuple):
    """The constant's experiments and key paths (each set to every value, as a sweep's grid
    sets it); returns ours, the one value they hold."""
    experiments = config["experiments"]
    claimed = [  # the default build's experiments and the geometry ones (beyond the paper)
        n for n, e in experiments.items() if e["default_build"] or e["layout"] == "geometry"
    ]
    found = {}
    for experiment, keys in entry["set"].items():
        where = (*path, "set", experiment)
        if experiment not in claimed:
            raise ConfigError(
                where,
                f"{experiment!r} is no experiment whose claims the default build or "
                f"results/geometry.pdf measures ({claimed})",
            )
        keys = [keys] if isinstance(keys, str) else list(keys)
        grid = {"zip": dict.fromkeys(keys, entry["values"])} if len(keys) > 1 else {}
        grid = grid or {keys[0]: entry["values"]}
        try:
            sweep_check.check_grid({"grid": grid}, experiments[experiment], schema, ())
        except ConfigError as err:
            message = str(err).removeprefix(f"config key {err.key}: ")
            raise ConfigError(where, message) from None
        for key in keys:
            found[f"{experiment}: {key}"] = at(experiments[experiment], *key.split("."))
    if len(set(found.values())) > 1 and not entry.get("together"):
        raise ConfigError(
            (*path, "set"),
            f"a constant is one value; its key paths hold {found} (together: true moves "
            "several constants as one)",
        )
    return next(iter(found.values()))
