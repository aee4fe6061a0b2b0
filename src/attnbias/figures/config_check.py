"""The refusals of an experiment whose layout, data model and decoder disagree, run by
common.smk after the schema's defaults are filled in (train.train_u false where unset).

Checked by key, before any job: a data model whose data hold no decoder u (DataModel's
fixed_decoder: DM) trains it, so its experiment needs train.train_u: true (else its svm job
finds no u_mm); and each metric panel a layout draws (panels.PANELS) must be one its runs
log under that train_u (training.metrics.logged_metrics: gap_u only where u trains, the
excess loss only where it is fixed). Every refusal is a ConfigError naming its key path
and a change that clears it.
"""

from __future__ import annotations

from attnbias.data.models import DATA_MODELS, data_model
from attnbias.figures.panels import PANELS
from attnbias.training.metrics import logged_metrics
from attnbias.workflow.configkeys import ConfigError


def missing_metrics(layout: str, train_u: bool) -> list[str]:
    """The metrics that `layout`'s panels draw and runs under `train_u` do not log (the
    per-sample ones aside: their number is the data's); none for a layout without panels."""
    logged = set(logged_metrics(0, train_u))
    drawn = [p.metric for p in PANELS.get(layout, ()) if not p.metric.startswith("opt_softmax_")]
    return [metric for metric in drawn if metric not in logged]


def _layouts_for(train_u: bool) -> list[str]:
    return [layout for layout in PANELS if not missing_metrics(layout, train_u)]


def check_decoders(config: dict) -> None:
    """Every experiment's data model, train.train_u and layout agree (module doc)."""
    with_decoder = sorted(m for m, entry in DATA_MODELS.items() if entry.fixed_decoder)
    for name, e in config["experiments"].items():
        path = ("experiments", name)
        model, layout, train_u = e["data"]["model"], e["layout"], e["train"]["train_u"]
        fixed = data_model(model).fixed_decoder
        if not fixed and not train_u:
            if not missing_metrics(layout, True):
                raise ConfigError(
                    (*path, "train", "train_u"),
                    f"data model {model} holds no decoder u (it trains, from u = 0), so its "
                    "svm job solves for u_mm only where u trains: set train.train_u: true",
                )
            raise ConfigError(
                (*path, "data", "model"),
                f"data model {model} holds no decoder u (it trains, from u = 0), but layout "
                f"{layout} draws {missing_metrics(layout, True)}, which only a fixed decoder "
                f"logs: choose a data model with one ({', '.join(with_decoder)}), e.g. "
                "example1",
            )
        missing = missing_metrics(layout, train_u)
        other = str(not train_u).lower()
        if missing and fixed:  # the other train_u logs them
            raise ConfigError(
                (*path, "train", "train_u"),
                f"layout {layout} draws {missing}, which runs log only with train.train_u: "
                f"{other}: set train.train_u: {other}",
            )
        if missing:  # u must train: another layout
            raise ConfigError(
                (*path, "layout"),
                f"layout {layout} draws {missing}, which runs of data model {model} (its "
                f"decoder trains) do not log: choose a layout that draws what they log "
                f"({', '.join(_layouts_for(True))})",
            )
