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


# The neighbours' jobs that solve or train for minutes (docs/neighbours.md): CPU-seconds per
# seed at the configured sizes, measured 2026-11-28 on the 2-core VM (docs/speed.md, "The
# neighbours' targets" and "The neighbours' local-convergence targets": 194 CPU-s for 50
# seeds of the 72-cell rank grid, 285 and 45 CPU-s for 100 seeds of the local runs)
NEIGHBOURS_PER_SEED = {
    "tfsvm_rank_table": ("tfsvm_rank", 194 / 50),
    "attentionmd_local_run": ("attentionmd_local", 285 / 100),
    "tfsvm_local_run": ("tfsvm_local", 45 / 100),
}
MEASURED_RANK_CELLS = 72  # 3 n x 3 T x 8 d
MEASURED_LOCAL_SIZE = 6 * 8 * 10**2  # n T d^2 at their n = 6, T = 8, d = 10


def neighbours_seconds(rule: str, settings: dict) -> float:
    """Estimated CPU-seconds of a neighbours' job: the measured cost per seed times the
    seeds, scaled by the grid's cells (the rank grid) or by n T d^2 (a step's work; the
    local runs); other sizes than the measured ones are not measured."""
    _, per_seed = NEIGHBOURS_PER_SEED[rule]
    if rule == "tfsvm_rank_table":
        cells = len(settings["n"]) * len(settings["T"]) * len(settings["d"])
        scale = cells / MEASURED_RANK_CELLS
    else:
        scale = settings["n"] * settings["T"] * settings["d"] ** 2 / MEASURED_LOCAL_SIZE
    return settings["seeds"] * per_seed * scale


def neighbours_announcement(rule: str, settings: dict) -> str | None:
    """The line a build prints before neighbours' job `rule` starts, where its estimate
    is over cost.ANNOUNCE_SECONDS; None where it is not."""
    seconds = neighbours_seconds(rule, settings)
    if seconds <= cost.ANNOUNCE_SECONDS:
        return None
    section, _ = NEIGHBOURS_PER_SEED[rule]
    return (
        f"{rule} (neighbours.{section}): about {_duration(seconds)} of CPU time "
        f"({settings['seeds']} seeds; estimated from the costs measured {cost.MEASURED}, "
        "attnbias.workflow.svm_cost_lines)"
    )
