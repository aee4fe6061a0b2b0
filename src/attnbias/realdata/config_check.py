"""The refusals of the real-data config (`real_data`), run by common.smk after the schema's
defaults are filled in (attnbias.workflow.configcheck.check_workflow): real-data names that
clash with the other experiments' or each other's, model keys that name no model, text data
with a text model, a tuning seed that is also reported, a probe subset larger than the
training subset. Every refusal is a ConfigError naming its key path."""

from __future__ import annotations

from attnbias.realdata.sources import TEXT_DATASETS
from attnbias.workflow.configkeys import ConfigError


def check_real(config: dict) -> None:
    """Real-data names apart from the others, model keys that name a model, text data with
    a text model (the schema gives image data vit_small)."""
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
    for name, e in real["experiments"].items():
        _check_probe(name, e)
        _check_tuning(real["experiments"], name, e)
    for name, s in real["similarity"].items():
        if s["model"] not in real["models"]:
            raise ConfigError(
                ("real_data", "similarity", name, "model"),
                f"{s['model']!r} is not a key of real_data.models ({models})",
            )


def _seeds(e: dict) -> list[int]:
    first = e.get("first_seed", 0)
    return list(range(first, first + e["seeds"]))


def _check_probe(name: str, e: dict) -> None:
    """A probe subset within the training subset (a whole split is checked when loaded:
    attnbias.realdata.sample_order.probe_subset); a sweep's rule reads the probe."""
    train, key = e["train"], ("real_data", "experiments", name, "train", "probe_samples")
    probe, size = train.get("probe_samples", 0), train.get("train_samples")
    if size is not None and probe > size:
        raise ConfigError(key, f"{probe} is larger than train_samples ({size}): the probe is a "
                          "subset of the training set")  # fmt: skip
    if "sweep_of" in e and not probe:
        raise ConfigError(key, "a sweep's tuning rule (real_data.tuning.rule) reads the probe "
                          "loss: give it a probe subset (e.g. 256)")  # fmt: skip


def _check_tuning(experiments: dict, name: str, e: dict) -> None:
    """Held-out tuning: a figure's tuning_seed below its reported seeds, and a sweep that runs
    its figure's tuning_seed only, never a seed the figure reports."""
    path = ("real_data", "experiments", name)
    tuning = e.get("tuning_seed")
    if tuning is not None and tuning >= e.get("first_seed", 0):
        raise ConfigError(
            (*path, "tuning_seed"),
            f"the tuning seed {tuning} chose settings: it must not be reported, so first_seed "
            f"({e.get('first_seed', 0)}) must be above it",
        )
    target = e.get("sweep_of")
    if target is None:
        return
    if target not in experiments or "sweep_of" in experiments[target]:
        raise ConfigError((*path, "sweep_of"), f"{target!r} is not a real-data figure")
    figure = experiments[target]
    reported = set(_seeds(figure)) & set(_seeds(e))
    if reported:
        raise ConfigError(
            (*path, "first_seed"),
            f"the sweep tunes on seed(s) {sorted(reported)}, which {target} reports "
            f"(seeds {_seeds(figure)[0]} to {_seeds(figure)[-1]}): tune on a held-out seed",
        )
    if _seeds(e) != [figure.get("tuning_seed")]:
        raise ConfigError(
            ("real_data", "experiments", target, "tuning_seed"),
            f"is {figure.get('tuning_seed')}, but its sweep {name} runs seed(s) {_seeds(e)}: "
            "name the one seed the sweep tunes on",
        )
