"""The workflow's reading of the geometry experiments (layout `geometry`, beyond the paper):
what their train jobs read besides the others' (each norm's SVM solution), what the
geometry figure draws, and what the claims read of them where their tables are built.

Apart from WorkflowConfig (attnbias.workflow.config), which it reads: the other
experiments' jobs never see these values, so their inputs and params stay as they were.
"""

from __future__ import annotations

import os

from attnbias.data.models import data_model
from attnbias.workflow.config import WorkflowConfig, canonical

# the geometry figure and the claims' note where its tables are missing
FIGURE = "geometry.pdf"
BUILD_HINT = "build results/geometry.pdf (snakemake -c2 results/geometry.pdf)"


class GeometryConfig:
    """The geometry experiments of a validated config (WorkflowConfig.geometry)."""

    def __init__(self, wf: WorkflowConfig):
        self.wf = wf
        self.experiments = wf.geometry

    def norms(self, experiment: str) -> list[str]:
        return list(self.experiments[experiment]["norms"])

    def svm_file(self, pattern: str, experiment: str) -> list[str]:
        """A train job's svm-geometry input (`pattern`: its path): none for other layouts."""
        return [pattern.format(experiment=experiment)] if experiment in self.experiments else []

    def train(self, experiment: str) -> dict:
        """What a train job reads of its svm-geometry file: the norms and each seed's
        identity of the file; {} for other layouts."""
        if experiment not in self.experiments:
            return {}
        return {
            "norms": self.norms(experiment),
            "identities": self.wf.seed_identities("svm_geometry", experiment),
        }

    def figure_inputs(self, metrics: str, data: str, svm: str) -> dict:
        """The geometry figure's inputs, named by kind and experiment (metrics/<name>,
        data/<name>, svm/<name>); the arguments are the path patterns."""
        patterns = {"metrics": metrics, "data": data, "svm": svm}
        return {
            f"{kind}/{name}": pattern.format(experiment=name)
            for name in self.experiments
            for kind, pattern in patterns.items()
        }

    def figure(self) -> dict:
        """The geometry figure's params: per experiment its title, data description, norms,
        optimizers (label, expected norm) in config order, and its table's identity."""
        from attnbias.geometry.expected import expected_norm

        return {
            name: canonical(
                {
                    "title": e["title"] or name,
                    "description": data_model(e["data"]["model"]).description,
                    "data": e["data"],
                    "train": e["train"],
                    "seeds": e["seeds"],
                    "norms": self.norms(name),
                    "order": list(e["optimizers"]),
                    "labels": {o: s.get("label", o) for o, s in e["optimizers"].items()},
                    "expected": {o: expected_norm(s) for o, s in e["optimizers"].items()},
                    "identity": self.wf.identity("metrics", name),
                }
            )
            for name, e in self.experiments.items()
        }

    def claims_built(self, table: str) -> dict:
        """Claims params: what the claims read of each geometry experiment whose aggregate
        table (`table`, a pattern of {experiment}) this build holds; without any, the
        claims' section "Beyond the paper" reads "not measured" (BUILD_HINT). Params, not
        inputs, as the real-data tables (WorkflowConfig.claims_real_built)."""
        built = {}
        for name, e in self.experiments.items():
            if os.path.exists(path := table.format(experiment=name)):
                built[name] = {
                    "layout": e["layout"],
                    "seeds": e["seeds"],
                    "optimizers": {o: self.wf.optimizer(name, o) for o in e["optimizers"]},
                    "labels": {o: s.get("label", o) for o, s in e["optimizers"].items()},
                    "paper_figure": None,
                    "norms": self.norms(name),
                    "dataset": e["data"]["model"],
                    "identity": self.wf.identity("metrics", name),
                    "table": path,
                }
        return built
