"""The refusals of `sweeps:` entries, run before any job (common.smk, after configcheck).

Each names the key path under `sweeps.<name>`: a base that is no experiment, an empty grid,
a grid key that no experiment can have (unknown) or that the base lacks, a grid value the
experiment's schema or OptimizerSpec refuses, more than sweep_grid.MAX_POINTS points, an
unknown metric, and a claim of an unknown kind, with missing or unknown arguments, or
naming an optimizer or metric that does not exist.
"""

from __future__ import annotations

from attnbias.studies import sweep_claims, sweep_grid, sweep_metrics
from attnbias.workflow.configkeys import ConfigError


def check_sweeps(config: dict, schema: dict) -> None:
    """Every sweep entry; a refusal is a configkeys.ConfigError naming its key path."""
    for name, entry in (config.get("sweeps") or {}).items():
        path = ("sweeps", name)
        experiments = config["experiments"]
        if entry["base"] not in experiments:
            raise ConfigError(
                (*path, "base"),
                f"{entry['base']!r} is not an experiment of the config ({sorted(experiments)})",
            )
        base = experiments[entry["base"]]
        check_grid(entry, base, schema, path)
        base = sweep_grid.trained(entry, base)
        _check_metrics(entry, path)
        _check_claims(entry, base, path)


def check_grid(entry: dict, base: dict, schema: dict, path: tuple) -> None:
    """An entry's grid on its base experiment (sweep_grid.check), and every value it sets,
    which must give an experiment the schema and OptimizerSpec accept; a ConfigError names
    the key path under `path`."""
    try:
        sweep_grid.check(entry, base)
    except sweep_grid.GridError as err:
        message = str(err)
        if isinstance(err, sweep_grid.MissingKeyError) and _unknown(base, err.key, schema):
            message = f"unknown key path {err.key}: no experiment has it; {message}"
        raise ConfigError((*path, *err.path), message) from None
    _check_values(entry, sweep_grid.trained(entry, base), schema, path)


def _experiment_schema(schema: dict) -> dict:
    return {**schema["$defs"]["experiment"], "$defs": schema["$defs"]}


def _errors(experiment: dict, schema: dict) -> list:
    from attnbias.workflow.validator import validator_class

    return list(validator_class()(_experiment_schema(schema)).iter_errors(experiment))


def _unknown(base: dict, key: str, schema: dict) -> bool:
    """Whether the schema refuses `key` in any experiment (not only this base's)."""
    try:
        probe = sweep_grid.apply(base, {key: None})
    except (KeyError, TypeError):
        return True
    return any(e.validator == "additionalProperties" for e in _errors(probe, schema))


def _check_values(entry: dict, base: dict, schema: dict, path: tuple) -> None:
    """Each value of each axis, set in the base, must give an experiment the schema and
    optimizer specs accept (a point is the base with several such values)."""
    from attnbias.optim.spec import spec_of

    for axis in sweep_grid.axes(entry["grid"]):
        for row in zip(*axis.values(), strict=True):
            values = dict(zip(axis, row, strict=True))
            experiment = sweep_grid.apply(base, values)
            where = (*path, "grid", next(iter(axis)))
            found = _errors(experiment, schema)
            if found:
                raise ConfigError(where, f"value {row}: {found[0].message}")
            for opt_name, opt in experiment["optimizers"].items():
                try:
                    spec_of(opt, real=False)  # each value's own experiment
                except ValueError as err:
                    raise ConfigError(where, f"value {row}, optimizer {opt_name}: {err}") from None


def _check_metrics(entry: dict, path: tuple) -> None:
    known = sweep_metrics.registry()
    for i, name in enumerate(entry["metrics"]):
        if name not in known:
            raise ConfigError(
                (*path, "metrics", i), f"unknown metric {name!r}; known: {sorted(known)}"
            )


def _check_claims(entry: dict, base: dict, path: tuple) -> None:
    optimizers, metrics = list(base["optimizers"]), sweep_metrics.registry()
    for claim_name, spec in (entry.get("claims") or {}).items():
        where = (*path, "claims", claim_name)
        kind = spec.get("claim")
        if kind not in sweep_claims.CLAIMS:
            raise ConfigError(
                (*where, "claim"), f"unknown claim {kind!r}; known: {sorted(sweep_claims.CLAIMS)}"
            )
        wanted = sweep_claims.CLAIMS[kind].arguments()
        given = [k for k in spec if k != "claim"]
        missing = [a for a in wanted if a not in given]
        extra = [a for a in given if a not in wanted]
        if missing or extra:
            raise ConfigError(
                where,
                f"claim {kind} takes {wanted}; missing {missing}, unknown {extra}",
            )
        for arg, value in spec.items():
            if arg in sweep_claims.OPTIMIZER_ARGUMENTS and value not in optimizers:
                raise ConfigError(
                    (*where, arg), f"{value!r} is no optimizer of the base ({optimizers})"
                )
            if arg in sweep_claims.METRIC_ARGUMENTS and value not in metrics:
                raise ConfigError(
                    (*where, arg), f"unknown metric {value!r}; known: {sorted(metrics)}"
                )
            if arg == "series" and value not in sweep_metrics.CURVES:
                known = sweep_metrics.CURVES
                raise ConfigError((*where, arg), f"{value!r} is not a logged series {known}")
