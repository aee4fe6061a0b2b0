"""What the claims table reads of one synthetic experiment, from its files: the aggregate
table, the data and SVM files (||W_mm||, T, the hypotheses their jobs stored) and, for joint
training, each optimizer's final u (its margin). The claims job (workflow/scripts/claims.py)
and the robustness points (attnbias.studies.robustness_points, which also retrains some runs
on the same data and SVMs, and for a geometry experiment adds its svm-geometry file's SVMs)
read them alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnbias.claims.joint import u_margin_ratio
from attnbias.data import hypotheses as hyp
from attnbias.workflow import io
from attnbias.workflow.svm_file import load_svm


@dataclass
class ExperimentInputs:
    """One experiment's files as the claims read them. `reports`: each seed's hypotheses
    (data.hypotheses.report), `u_margins`: optimizer -> each seed's u margin ratio (joint
    training only, else None); `geometry`: a geometry experiment's SVMs in each norm, what
    its runs' measures are taken against (svm_geometry_file.GeometrySVMs, read where runs
    train again: the claims job never reads them, nor depends on their code), else None."""

    table: pd.DataFrame
    datasets: dict[int, dict[str, np.ndarray]]
    solutions: dict[int, dict[str, np.ndarray]]
    reports: list[dict]
    u_margins: dict[str, list[float]] | None
    geometry: Any = None

    @property
    def W_mm_norms(self) -> list[float]:
        return [float((s["W_mm"] ** 2).sum() ** 0.5) for s in self.solutions.values()]

    @property
    def T_tokens(self) -> int:
        return next(iter(self.datasets.values()))["X"].shape[1]

    def margins(self, finals: dict[int, dict]) -> list[float]:
        """Each seed's u margin ratio of the final parameters `finals` ({seed: {"u": ...}})."""
        return [
            u_margin_ratio(d["X"], d["y"], d["opt"], finals[s]["u"], self.solutions[s]["u_mm"])
            for s, d in self.datasets.items()
        ]


def named(files, name: str):
    """`path` for `load`: experiment `name`'s files among a job's inputs `files`, named by
    kind and experiment as WorkflowConfig.claims_inputs names them."""
    return lambda kind, *more: files["/".join((kind, name, *more))]


def load(path, experiment: dict, expect: dict) -> ExperimentInputs:
    """An experiment's inputs: `path(kind)` (metrics, data, svm) and `path("final", opt)`
    give its files, `expect` each file's identity (the claims' params)."""
    table = io.load_metrics(path("metrics"), expect[path("metrics")])
    data, svm = path("data"), path("svm")
    datasets = io.load_data(data, expect[data])
    solutions = load_svm(svm, datasets, expect[svm])
    inputs = ExperimentInputs(table, datasets, solutions, io.hypotheses_by_seed(data, svm, expect),
                              None)  # fmt: skip
    if experiment["layout"] == "joint":  # the final u of every optimizer and seed
        inputs.u_margins = {}
        for opt in experiment["optimizers"]:
            final = path("final", opt)
            inputs.u_margins[opt] = inputs.margins(io.load_seeds(final, ("u",), expect[final]))
    return inputs


def claims_arguments(inputs: dict[str, ExperimentInputs]) -> tuple[dict, ...]:
    """attnbias.claims.claims's tables, W_mm_norms, T_tokens, hypotheses and u_margins."""
    tables = {name: e.table for name, e in inputs.items()}
    W_mm_norms = {name: e.W_mm_norms for name, e in inputs.items()}
    T_tokens = {name: e.T_tokens for name, e in inputs.items()}
    hypotheses = {name: hyp.summarize(e.reports) for name, e in inputs.items()}
    u_margins = {name: e.u_margins for name, e in inputs.items() if e.u_margins is not None}
    return tables, W_mm_norms, T_tokens, hypotheses, u_margins
