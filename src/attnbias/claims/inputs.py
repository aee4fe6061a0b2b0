"""What the claims table reads of one synthetic experiment, from its files: the aggregate
table, the data and SVM files (||W_mm||, T, the hypotheses their jobs stored) and, for joint
training, each optimizer's final u (its margin). The claims job (workflow/scripts/claims.py)
and the robustness points (attnbias.studies.robustness_points, which also retrains some runs
on the same data and SVMs, and for a geometry experiment adds its svm-geometry file's SVMs)
read them alike.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnbias.claims.joint import u_margin_ratio
from attnbias.data import hypotheses as hyp
from attnbias.model.queries import queries_of
from attnbias.svm.check import smallest_margin
from attnbias.workflow import npz, parquet
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

    @property
    def feasibility(self) -> dict[str, list]:
        """Each seed's sizes (n, T, d) and the smallest W-SVM constraint value of its stored
        W_mm, min over i and t != opt_i of (x_opt - x_t)^T W_mm x_1: at least 1 (to rounding)
        certifies that the W-SVM is feasible on that seed's data (footnote 4's row)."""
        out: dict[str, list] = {"n": [], "T": [], "d": [], "min_constraint": []}
        for seed, data in self.datasets.items():
            n, T, d = data["X"].shape
            W_mm = self.solutions[seed]["W_mm"]
            lowest = smallest_margin(data["X"], data["opt"], W_mm, queries_of(data))
            for key, value in zip(out, (n, T, d, lowest), strict=True):
                out[key].append(value)
        return out

    @property
    def data_identity(self) -> str:
        """A checksum of the data and W-SVM arrays, every seed (their values, dtypes and
        shapes; not the files' bytes, whose identity records name the experiment): equal for
        two experiments exactly where their statements about the data must read the same."""
        digest = hashlib.sha256()
        for seed in sorted(self.datasets):
            for part in (self.datasets[seed], self.solutions[seed]):
                for key in sorted(part):
                    array = np.ascontiguousarray(part[key])
                    digest.update(f"{seed}/{key}/{array.dtype.str}/{array.shape}".encode())
                    digest.update(array.tobytes())
        return digest.hexdigest()

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
    table = parquet.load_metrics(path("metrics"), expect[path("metrics")])
    data, svm = path("data"), path("svm")
    datasets = npz.load_data(data, expect[data])
    solutions = load_svm(svm, datasets, expect[svm])
    inputs = ExperimentInputs(table, datasets, solutions, npz.hypotheses_by_seed(data, svm, expect),
                              None)  # fmt: skip
    if experiment["layout"] == "joint":  # the final u of every optimizer and seed
        inputs.u_margins = {}
        for opt in experiment["optimizers"]:
            final = path("final", opt)
            inputs.u_margins[opt] = inputs.margins(npz.load_seeds(final, ("u",), expect[final]))
    return inputs


def claims_arguments(inputs: dict[str, ExperimentInputs]) -> tuple[dict, ...]:
    """attnbias.claims.layouts.claims's tables, W_mm_norms, T_tokens, hypotheses, u_margins,
    feasibility (ExperimentInputs.feasibility) and data identities (data_identity)."""
    tables = {name: e.table for name, e in inputs.items()}
    W_mm_norms = {name: e.W_mm_norms for name, e in inputs.items()}
    T_tokens = {name: e.T_tokens for name, e in inputs.items()}
    hypotheses = {name: hyp.summarize(e.reports) for name, e in inputs.items()}
    u_margins = {name: e.u_margins for name, e in inputs.items() if e.u_margins is not None}
    feasibility = {name: e.feasibility for name, e in inputs.items()}
    data_ids = {name: e.data_identity for name, e in inputs.items()}
    return tables, W_mm_norms, T_tokens, hypotheses, u_margins, feasibility, data_ids
