"""The svm_geometry jobs' cost estimates for one experiment of the config: its sizes read
from its data model's params and defaults, and the line a build prints before a long job
starts (common.smk, onstart). The measured costs and the limit on d live in svm.cost."""

from __future__ import annotations

from attnbias.svm import cost


def sizes(experiment: dict) -> tuple[int, int, int]:
    """(n, T, d) of an experiment's data: its params, else its data model's defaults."""
    from attnbias.data import models

    data = experiment["data"]
    defaults = models.keyword_defaults(models.generator(data["model"]))
    params = {**defaults, **(data.get("params") or {})}
    return params["n"], params["T"], params["d"]


def experiment_seconds(experiment: dict) -> float:
    """Estimated CPU-seconds of an experiment's svm_geometry job (every seed)."""
    n, T, d = sizes(experiment)
    return experiment["seeds"] * cost.seed_seconds(experiment["norms"], d, n * (T - 1))


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def announcement(name: str, experiment: dict) -> str | None:
    """The line a build prints before the svm_geometry job of experiment `name` starts,
    where its estimate is over cost.ANNOUNCE_SECONDS; None where it is not."""
    seconds = experiment_seconds(experiment)
    if seconds <= cost.ANNOUNCE_SECONDS:
        return None
    n, T, d = sizes(experiment)
    return (
        f"svm_geometry of experiment {name}: about {_duration(seconds)} of CPU time "
        f"({experiment['seeds']} seeds x the norms {experiment['norms']} at d = {d}, "
        f"n (T - 1) = {n * (T - 1)} constraints; estimated from the costs measured "
        f"{cost.MEASURED}, attnbias.svm.cost)"
    )
