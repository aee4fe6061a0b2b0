"""Checks of the config that JSON schema cannot make, run before any job (common.smk).

Every refusal is a ConfigError whose message starts with the dotted key path
(`config key experiments.fig2.optimizers.gd.lr: ...`), so a user sees which key to fix.

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
  check_names       experiment names that collide with the workflow's own targets
  check_sizes       problem sizes whose SVM or training would not fit (n (T-1) constraints)
  check_signals     Example 1's query scoring at or above the optimal token
  check_texts       titles and labels that matplotlib or the report would misread
  check_specs       optimizer settings that attnbias.optim.spec.OptimizerSpec refuses (after the
                    schema's defaults are filled in, like the check below)
  check_real        real-data names that clash, model keys that name no model

The sweeps' entries are checked by attnbias.studies.sweep_check, which common.smk runs next
(this module is below the studies: it imports none of them).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator

from attnbias.workflow.validator import validator_class

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
    "train": "the training stage's folder {results}/train/",
    "logs": "the log folder {results}/logs/",
    "benchmarks": "the wall-time folder {results}/benchmarks/",
    "checkpoints": "the real-data checkpoints' folder {results}/checkpoints/",
    "fig10": "the token-similarity figure {results}/fig10.pdf",
    "fig3_sweep": "fig3's sweep under its earlier name, {results}/fig3_sweep.pdf",
    "sweeps": "the sweeps' folder {results}/sweeps/",
}

MAX_CONSTRAINTS = 10_000  # n (T - 1) rows of the W-SVM's Gram matrix (8 bytes each squared)


class ConfigError(ValueError):
    """A config value that the workflow refuses; the message names its key path."""

    def __init__(self, path, message: str):
        self.key = key_path(path)
        super().__init__(f"config key {self.key}: {message}")


def key_path(path) -> str:
    """('experiments', 'fig2', 'seeds') -> 'experiments.fig2.seeds'; list items as [i]."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _walk(value, path=()) -> Iterator[tuple[tuple, object]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, (*path, i))


# (section path pattern, old key, new key); "*" is any name in that place
RENAMED = [
    (("experiments", "*"), "figure", "layout"),
    (("experiments", "*", "optimizers", "*"), "cap", "max_step"),
    (("global_convergence", "optimizers", "*"), "cap", "max_step"),
    (("real_data", "experiments", "*", "optimizers", "*"), "name", "rule"),
]


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
    for path, value in _walk(config):
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(path, f"{value} is not a finite number")


MARKUP = "<>"  # what would open or close an HTML element in the report's <script> JSON


def check_markup(config: dict) -> None:
    """No `<` or `>` in any key or string of the config: every config value may reach a
    job's params, which `snakemake --report` writes unescaped into a <script> element."""
    for path, value in _walk(config):
        texts = [(path, value)] if isinstance(value, str) else []
        if isinstance(value, dict):
            texts += [((*path, key), key) for key in value if isinstance(key, str)]
        for where, text in texts:
            found = sorted({c for c in text if c in MARKUP})
            if found:
                raise ConfigError(
                    where,
                    f"{text!r} holds {' and '.join(map(repr, found))}, which the HTML report "
                    "would read as markup; leave them out",
                )


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
    """Validate against the schema; whole floats where integers belong become integers.

    The first error (jsonschema's best match) is raised as a ConfigError with its key path.
    """
    from jsonschema.exceptions import best_match

    validator = validator_class()(schema)
    for _ in range(100):  # each pass may uncover floats in branches chosen by an earlier fix
        paths = set(_whole_floats(validator.iter_errors(config)))
        if not paths:
            break
        for path in paths:
            _set(config, path, int(_get(config, path)))
    error = best_match(validator.iter_errors(config))
    if error is not None:
        raise ConfigError(tuple(error.absolute_path), error.message)


def _get(config, path):
    for key in path:
        config = config[key]
    return config


def _spec_default(key: str):
    """An optimizer setting's default: OptimizerSpec's, its one home."""
    from dataclasses import fields

    from attnbias.optim.spec import OptimizerSpec

    return {f.name: f.default for f in fields(OptimizerSpec)}[key]


def _optimizers(config: dict) -> Iterator[tuple[tuple, dict, bool]]:
    import inspect

    from attnbias.training import kernel  # the trainer, whose train_u default this reads (no torch)

    default_train_u = inspect.signature(kernel.train).parameters["train_u"].default
    for name, experiment in config["experiments"].items():
        train_u = experiment.get("train", {}).get("train_u", default_train_u)
        for opt_name, opt in experiment["optimizers"].items():
            yield ("experiments", name, "optimizers", opt_name), opt, train_u
    for opt_name, opt in config.get("global_convergence", {}).get("optimizers", {}).items():
        yield ("global_convergence", "optimizers", opt_name), opt, False


def _ignored(rule) -> list[str]:
    """The OptimizerSpec settings that `rule` (of attnbias.optim.rules) never reads."""
    from dataclasses import fields

    from attnbias.optim import rules
    from attnbias.optim.spec import OptimizerSpec

    reads = {"rule", *rules.SHARED, *rule.settings}
    return [f.name for f in fields(OptimizerSpec) if f.name not in reads]


def check_optimizers(config: dict) -> None:
    """Refuse unknown rules, and settings that the rule ignores (they would only mislead):
    written, not null, and not the default (which changes nothing)."""
    from attnbias.optim import rules

    for path, opt, train_u in _optimizers(config):
        name = opt["rule"]
        if name not in rules.RULES:
            raise ConfigError(
                (*path, "rule"),
                f"unknown rule {name!r}; choose one of {', '.join(rules.RULES)} "
                "(attnbias.optim.rules)",
            )
        for key in _ignored(rules.RULES[name]):
            if opt.get(key) is not None and opt[key] != _spec_default(key):
                raise ConfigError(
                    (*path, key), f"rule {name} ignores {key}; remove it (or change the rule)"
                )
        if opt.get("lr_u") is not None and not train_u:
            raise ConfigError(
                (*path, "lr_u"), "lr_u is the step of u, but u is not trained here; remove it"
            )


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


def _defaults(model: str) -> dict:
    from attnbias.data import models  # numpy: only where these checks run

    function = (
        models.perturbed_example1 if model == "perturbed_example1" else models.generator(model)
    )
    return models.keyword_defaults(function)


def _texts(config: dict) -> Iterator[tuple[tuple, str]]:
    """(path, text) of every string that reaches a figure or a caption as free text."""
    for name, e in config["experiments"].items():
        yield ("experiments", name, "title"), e.get("title", "")
        for opt_name, opt in e["optimizers"].items():
            if "label" in opt:
                yield ("experiments", name, "optimizers", opt_name, "label"), opt["label"]
    for opt_name, opt in config.get("global_convergence", {}).get("optimizers", {}).items():
        if "label" in opt:
            yield ("global_convergence", "optimizers", opt_name, "label"), opt["label"]
    real = config.get("real_data", {})
    for name, e in real.get("experiments", {}).items():
        yield ("real_data", "experiments", name, "title"), e.get("title", "")
        for opt_name, opt in e["optimizers"].items():
            if "label" in opt:
                path = ("real_data", "experiments", name, "optimizers", opt_name, "label")
                yield path, opt["label"]
    for name, s in real.get("similarity", {}).items():
        yield ("real_data", "similarity", name, "title"), s.get("title", "")


def check_texts(config: dict) -> None:
    """Titles and labels: printable, no math that matplotlib cannot parse, labels shown.

    matplotlib reads text between two unescaped `$` as math and fails on bad math only when
    it draws, after all training; a label starting with `_` is left out of the legend.
    """
    for path, text in _texts(config):
        if not isinstance(text, str):
            continue
        bad = [c for c in text if unicodedata.category(c) in ("Cc", "Cf") and c != "\n"]
        if bad:
            raise ConfigError(path, f"holds the control character {bad[0]!r}; remove it")
        if path[-1] == "label" and text.startswith("_"):
            raise ConfigError(path, "a label starting with '_' is hidden from the legend")
        if path[-1] == "label" and not text.strip():
            raise ConfigError(path, "an empty label would show nothing in the legend")
        if path[-1] == "label" and len(re.findall(r"(?<!\\)\$", text)) % 2:
            # the labels are joined into the figure's settings line, where a lone $ would
            # pair with another label's as math
            raise ConfigError(path, "holds an odd number of $; escape a dollar sign as \\$")
        _check_math(path, text)


def _check_math(path, text: str) -> None:
    if "$" not in text:
        return
    from matplotlib.mathtext import MathTextParser
    from matplotlib.text import Text

    for line in text.split("\n"):  # matplotlib parses each line of a title on its own
        body, is_math = Text()._preprocess_math(line)
        if not is_math:
            continue
        try:
            MathTextParser("path").parse(body, dpi=72)
        except ValueError as err:
            lines = [part.strip() for part in str(err).splitlines() if part.strip()]
            raise ConfigError(
                path,
                f"matplotlib cannot parse the math in {line!r} ({lines[-1] if lines else err}); "
                "escape each $ as \\$ for a dollar sign",
            ) from None


def check_specs(config: dict) -> None:
    """Build every OptimizerSpec now, so a bad combination fails before any job runs."""
    from attnbias.optim.spec import OptimizerSpec

    for path, opt, train_u in _optimizers(config):
        try:
            spec = OptimizerSpec.from_config(opt)
        except ValueError as err:
            raise ConfigError(path, str(err)) from None
        if spec.reads("f_star") and spec.f_star == "opt" and train_u:
            raise ConfigError(
                path,
                "f_star 'opt' needs a fixed decoder, but the experiment's train.train_u is "
                "true; set f_star: 0",
            )


def check_real(config: dict) -> None:
    """Real-data names apart from the others, model keys that name a model, text data with
    a text model (the schema gives image data vit_small)."""
    from attnbias.realdata.sources import TEXT_DATASETS

    real = config["real_data"]
    models = sorted(real["models"])
    similarity = set(real["similarity"])
    clash = set(real["experiments"]) & (set(config["experiments"]) | similarity)
    if clash:
        raise ConfigError(
            ("real_data", "experiments"),
            f"{sorted(clash)} also named elsewhere (experiments, or real_data.similarity's "
            "token-similarity figures)",
        )
    clash = similarity & set(config["experiments"])
    if clash:
        raise ConfigError(("real_data", "similarity"), f"{sorted(clash)} also named in experiments")
    for name, e in real["experiments"].items():
        if e["model"] != "vit_small" and e["model"] not in real["models"]:
            raise ConfigError(
                ("real_data", "experiments", name, "model"),
                f"{e['model']!r} is neither vit_small nor a key of real_data.models ({models})",
            )
        if e["model"] == "vit_small" and e["dataset"] in TEXT_DATASETS:
            raise ConfigError(
                ("real_data", "experiments", name, "model"),
                f"dataset {e['dataset']} is text: its model is a BERT key of real_data.models, "
                "not vit_small (a model for images)",
            )
    for name, s in real["similarity"].items():
        if s["model"] not in real["models"]:
            raise ConfigError(
                ("real_data", "similarity", name, "model"),
                f"{s['model']!r} is not a key of real_data.models ({models})",
            )


def check_workflow(config: dict, schema: dict) -> None:
    """The checks that read the schema's defaults: run after Snakemake's validation."""
    check_specs(config)
    check_real(config)


def check(config: dict, schema: dict) -> None:
    """Every check, in order: renamed keys, finiteness, the schema, the cross-key checks."""
    check_renamed(config)
    check_finite(config)
    check_markup(config)
    validate(config, schema)
    check_names(config)
    check_optimizers(config)
    check_sizes(config)
    check_signals(config)
    check_digits(config)
    check_texts(config)
