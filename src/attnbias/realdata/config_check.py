"""The refusals of the real-data config (`real_data`), run by common.smk after the schema's
defaults are filled in (attnbias.workflow.configcheck.check_workflow): real-data names that
clash with the other experiments' or each other's, model keys that name no model, text data
with a text model. Every refusal is a ConfigError naming its key path."""

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
    for name, s in real["similarity"].items():
        if s["model"] not in real["models"]:
            raise ConfigError(
                ("real_data", "similarity", name, "model"),
                f"{s['model']!r} is not a key of real_data.models ({models})",
            )
