"""Checks of the config that JSON schema cannot make, run before any job (common.smk).

Every refusal is a ConfigError whose message starts with the dotted key path
(`config key experiments.fig2.optimizers.gd.lr: ...`), so a user sees which key to fix.

  check_keys        keys that YAML reads as no text (1, null, true: quote them), and nesting
                    deeper than configkeys.MAX_DEPTH
  check_renamed     keys renamed since (figure -> layout, cap -> max_step, a real-data
                    optimizer's name -> rule), named with their new key
  check_finite      NaN and inf anywhere (the schema's comparisons let NaN through)
  check_markup      `<` and `>` in any key or string: Snakemake's report embeds every job's
                    params (the config among them) as JSON in a <script> element without
                    escaping `</`, so such text would become live HTML (docs/workflow.md)
  validate          the schema, with whole floats (300.0) taken as the integers they are and
                    the error naming its key path
  check_optimizers  unknown update rules, and settings that the chosen rule ignores (GD with
                    a max_step): both from the rules' registry, attnbias.optim.rules
  check_real_optimizers  a real-data optimizer's rule without a torch optimizer, and settings
                    its module does not declare or whose declared schema refuses the value
  check_names       experiment names that collide with the workflow's own targets
  check_sizes       problem sizes whose SVM or training would not fit (n (T-1) constraints)
  check_signals     Example 1's query scoring at or above the optimal token
  check_texts       titles and labels that matplotlib or the report would misread
  check_specs       optimizer settings that attnbias.optim.spec.OptimizerSpec refuses (after the
                    schema's defaults are filled in, like the check below)
  check_geometry    the geometry experiments' norms (configcheck_geometry)

The text checks live in configcheck_texts, the optimizer checks in configcheck_optimizers, and
ConfigError with the key paths in configkeys; this module runs them all (callers import each
name from the module that defines it). The real-data entries are checked by
attnbias.realdata.config_check, the sweeps' by attnbias.studies.sweep_check, which
common.smk runs next (this module is below those packages: it imports none of them).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator

from attnbias.workflow.configcheck_geometry import check_geometry
from attnbias.workflow.configcheck_optimizers import (
    check_optimizers,
    check_real_optimizers,
    check_specs,
)
from attnbias.workflow.configcheck_texts import check_markup, check_texts
from attnbias.workflow.configkeys import MAX_DEPTH, ConfigError, walk
from attnbias.workflow.validator import validator_class

__all__ = [
    "RESERVED_NAMES",
    "MAX_CONSTRAINTS",
    "RENAMED",
    "check_keys",
    "check_renamed",
    "check_finite",
    "validate",
    "check_names",
    "check_sizes",
    "check_signals",
    "check_digits",
    "check_workflow",
    "check",
]

# <results>/<name>.pdf and <results>/<name>/... of these belong to the workflow itself
# ({results}: the config's results folder)
RESERVED_NAMES = {
    "all": "the workflow's default rule",
    "real": "the rule building every real-data figure",
    "global_convergence": "the study's figure {results}/global_convergence.pdf",
    "claims": "the claims table {results}/claims.md",
    "report": "the HTML report {results}/report.html",
    "data": "the data stage's folder {results}/data/",
    "svm": "the SVM stage's folder {results}/svm/",
    "svm_geometry": "the SVMs under other norms' folder {results}/svm_geometry/",
    "train": "the training stage's folder {results}/train/",
    "logs": "the log folder {results}/logs/",
    "benchmarks": "the wall-time folder {results}/benchmarks/",
    "checkpoints": "the real-data checkpoints' folder {results}/checkpoints/",
    "fig10": "the token-similarity figure {results}/fig10.pdf",
    "fig3_sweep": "fig3's sweep under its earlier name, {results}/fig3_sweep.pdf",
    "sweeps": "the sweeps' folder {results}/sweeps/",
    "geometry": "the optimizer-geometry figure {results}/geometry.pdf",
    "claims_robustness": "the claims' robustness {results}/claims_robustness.md and its folder",
}

MAX_CONSTRAINTS = 10_000  # n (T - 1) rows of the W-SVM's Gram matrix (8 bytes each squared)


# (section path pattern, old key, new key); "*" is any name in that place
RENAMED = [
    (("experiments", "*"), "figure", "layout"),
    (("experiments", "*", "optimizers", "*"), "cap", "max_step"),
    (("global_convergence", "optimizers", "*"), "cap", "max_step"),
    (("real_data", "experiments", "*", "optimizers", "*"), "name", "rule"),
]


def _yaml_text(key) -> str:
    """How YAML writes `key` (None: null, True: true, 1.5: 1.5)."""
    import yaml

    return yaml.safe_dump(key, default_style=None).removesuffix("\n...\n").strip()


def _kind(key) -> str:
    if key is None:
        return "null (no value)"
    if isinstance(key, bool):
        return "a boolean"
    return "a number" if isinstance(key, int | float) else f"a {type(key).__name__}"


def check_keys(config: dict) -> None:
    """Every key text (a name reaches file names and wildcards: YAML reads an unquoted 1,
    null or true as no text), and no nesting deeper than MAX_DEPTH; iterative, so that no
    depth makes it recurse."""
    stack = [((), config)]
    while stack:
        path, value = stack.pop()
        if len(path) >= MAX_DEPTH:
            raise ConfigError(
                path[:MAX_DEPTH],
                f"nested more than {MAX_DEPTH} levels deep (MAX_DEPTH), where the default "
                "config nests 7: remove the nesting",
            )
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    text = _yaml_text(key)
                    raise ConfigError(
                        path,
                        f"the key {text} is read by YAML as {_kind(key)}, not as a name: "
                        f"write it in quotes, '{text}'",
                    )
                stack.append(((*path, key), item))
        elif isinstance(value, list):
            stack.extend(((*path, i), item) for i, item in enumerate(value))


def _places(config, pattern, path=()) -> Iterator[tuple[tuple, dict]]:
    """(path, dict) of every dict in `config` at the path `pattern` ("*": any key)."""
    if not isinstance(config, dict):
        return
    if not pattern:
        yield path, config
        return
    head, *rest = pattern
    keys = config if head == "*" else [head] if head in config else []
    for key in keys:
        yield from _places(config[key], rest, (*path, key))


def check_renamed(config: dict) -> None:
    """Refuse a key renamed since, naming the key that replaces it."""
    for pattern, old, new in RENAMED:
        for path, section in _places(config, pattern):
            if old in section:
                raise ConfigError(
                    (*path, old),
                    f"renamed to {new}; write `{new}: {section[old]}` instead of "
                    f"`{old}: {section[old]}`",
                )


def check_finite(config: dict) -> None:
    """Refuse NaN and +-inf anywhere in the config."""
    for path, value in walk(config):
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(path, f"{value} is not a finite number")


def _set(config, path, value) -> None:
    for key in path[:-1]:
        config = config[key]
    config[path[-1]] = value


def _whole_floats(errors) -> Iterator[tuple]:
    for error in errors:
        wanted = error.validator_value if error.validator == "type" else ()
        wanted = [wanted] if isinstance(wanted, str) else wanted
        instance = error.instance
        if "integer" in wanted and isinstance(instance, float) and instance.is_integer():
            yield tuple(error.absolute_path)
        yield from _whole_floats(error.context or ())


def validate(config: dict, schema: dict) -> None:
    """Validate against the schema as Snakemake does, on a copy with the defaults filled in
    (a default may be refused where a written value is: `data: {model: dm}` gets
    `params: {}`, which lacks n); whole floats where integers belong become integers in
    `config`. The first error (jsonschema's best match) is raised as a ConfigError with its
    key path; neither `config`'s other values nor the schema change.
    """
    from jsonschema.exceptions import best_match

    validator = _filling_validator()(schema)
    for _ in range(100):  # each pass may uncover floats in branches chosen by an earlier fix
        errors = list(validator.iter_errors(copy.deepcopy(config)))
        paths = set(_whole_floats(errors))
        if not paths:
            break
        for path in paths:
            _set(config, path, int(_get(config, path)))
    error = best_match(errors)
    if error is None:
        return
    path = tuple(error.absolute_path)
    if error.validator != "required" and not _has(config, path):
        # the refused value is a default filled in (binary_digits' root: None), the key is
        # not written: say that it is needed, not that None is no string
        raise ConfigError(
            path, f"required here, and not set (its default {error.instance!r} does not do: "
            f"{error.message})",
        )  # fmt: skip
    raise ConfigError(path, error.message)


def _filling_validator():
    """validator_class() that fills in each missing key's default (a copy of it) as it
    validates, as snakemake.utils.validate's does."""
    from jsonschema import validators

    base = validator_class()
    properties = base.VALIDATORS["properties"]

    def fill(validator, props, instance, subschema):
        if isinstance(instance, dict):
            for key, sub in props.items():
                if isinstance(sub, dict) and "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
        yield from properties(validator, props, instance, subschema)

    return validators.extend(base, {"properties": fill})


def _get(config, path):
    for key in path:
        config = config[key]
    return config


def check_names(config: dict) -> None:
    """Refuse experiment names that are also the workflow's own targets or folders."""
    sections = [("experiments",), ("real_data", "experiments")]
    results = config.get("results", "results")
    for section in sections:
        names = _get(config, section) if _has(config, section) else {}
        for name in names:
            if name in RESERVED_NAMES:
                taken = RESERVED_NAMES[name].format(results=results)
                raise ConfigError(
                    (*section, name),
                    f"the name {name!r} is taken by {taken}; choose another",
                )


def _has(config, path) -> bool:
    try:
        _get(config, path)
    except (KeyError, TypeError):
        return False
    return True


def check_sizes(config: dict) -> None:
    """Refuse datasets whose W-SVM would need more than MAX_CONSTRAINTS constraints."""
    places = [
        (("experiments", n, "data", "params"), e["data"].get("params", {}))
        for n, e in config["experiments"].items()
    ]
    if "global_convergence" in config:
        places.append((("global_convergence", "data"), config["global_convergence"]["data"]))
    for path, params in places:
        n, T = params.get("n"), params.get("T")
        if isinstance(n, int) and isinstance(T, int) and n * (T - 1) > MAX_CONSTRAINTS:
            raise ConfigError(
                (*path, "n"),
                f"n (T - 1) = {n * (T - 1)} W-SVM constraints exceed the limit of "
                f"{MAX_CONSTRAINTS}; lower n or T",
            )


def check_signals(config: dict) -> None:
    """Example 1's query must score below the optimal token (models.example1 would refuse it
    only when its job runs), and the study's score spread must stay below the signal. An
    unset value is the generator's own default (models.keyword_defaults), never restated."""
    places = [
        (("experiments", n, "data", "params"), e["data"]["model"], e["data"].get("params", {}))
        for n, e in config["experiments"].items()
        if e["data"]["model"] in ("example1", "bad_direction")
    ]
    study = config.get("global_convergence")
    if study:
        places.append((("global_convergence", "data"), "perturbed_example1", study["data"]))
    for path, model, params in places:
        values = {**_defaults(model), **params}
        opt, query = values["opt_signal"], values["query_signal"]
        if query >= opt:
            raise ConfigError(
                (*path, "query_signal"),
                f"{query} must be below opt_signal ({opt}), or the query token would be "
                "the optimal one",
            )
    for name, knobs in (study or {}).get("settings", {}).items():
        values = {**_defaults("perturbed_example1"), **study["data"], **knobs}
        spread, opt = values["score_spread"], values["opt_signal"]
        if spread > 0 and spread >= opt:
            raise ConfigError(
                ("global_convergence", "settings", name, "score_spread"),
                f"{spread} must be below opt_signal ({opt}), or a noise token "
                "could rival the optimal one",
            )


def check_digits(config: dict) -> None:
    """Binary digits need two different classes: one digit for both labels means nothing."""
    for name, e in config["experiments"].items():
        digits = e["data"].get("params", {}).get("digits")
        if e["data"]["model"] == "binary_digits" and digits is not None:
            if len(set(digits)) != len(digits):
                raise ConfigError(
                    ("experiments", name, "data", "params", "digits"),
                    f"{digits} names one digit for both classes; give two different digits",
                )


def require_queries(path, model: str, params: dict) -> None:
    """Refuse the config setting at `path` (its keys), one that needs cross-attention's
    queries Z, where the experiment's data model `model` with `params` emits none
    (the registry's DataModel.queries: a bool or a function of the params), naming the key."""
    from attnbias.data import models  # numpy: only where these checks run

    queries = models.data_model(model).queries
    if not (queries(params) if callable(queries) else queries):
        with_queries = [m for m in models.MODELS if models.data_model(m).queries]
        raise ConfigError(
            path,
            f"needs queries Z (cross-attention), but data model {model!r} has none (its "
            f"query is each sequence's first token); use a data model with queries "
            f"({', '.join(with_queries) or 'none is registered yet'})",
        )


def _defaults(model: str) -> dict:
    from attnbias.data import models  # numpy: only where these checks run

    function = (
        models.perturbed_example1 if model == "perturbed_example1" else models.generator(model)
    )
    return models.keyword_defaults(function)


def check_workflow(config: dict, schema: dict) -> None:
    """The checks that read the schema's defaults: run after Snakemake's validation."""
    check_geometry(config, check_specs(config))  # the optimizers, resolved once


def check(config: dict, schema: dict) -> None:
    """Every check, in order: keys, renamed keys, finiteness, the schema, the cross-key
    checks."""
    check_keys(config)
    check_renamed(config)
    check_finite(config)
    check_markup(config)
    validate(config, schema)
    check_names(config)
    check_optimizers(config)
    check_real_optimizers(config)
    check_sizes(config)
    check_signals(config)
    check_digits(config)
    check_texts(config)
