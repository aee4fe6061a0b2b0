"""The workflow's reading of the geometry experiments (layout `geometry`, beyond the paper):
what their train jobs read besides the others' (each norm's SVM solution), what the
geometry figure draws, whether it is of the default build, and what the claims read of
them (the default build's tables as inputs, the others' where built).

Apart from WorkflowConfig (attnbias.workflow.config), which it reads: the other
experiments' jobs never see these values, so their inputs and params stay as they were.
"""

from __future__ import annotations

import os

from attnbias.data.models import data_model, data_name
from attnbias.workflow.config import WorkflowConfig, canonical
from attnbias.workflow.configcheck_geometry import TOKENS_DEFAULT

# the geometry figure and the claims' note where its tables are missing
FIGURE = "geometry.pdf"
BUILD_HINT = "build results/geometry.pdf (snakemake -c2 results/geometry.pdf)"


def attention(data: dict) -> str:
    """ "cross" where the data model's datasets carry queries Z (its registry entry), else
    "self": what the geometry figure names each row."""
    queries = data_model(data["model"]).queries
    found = queries(data.get("params", {})) if callable(queries) else queries
    return "cross" if found else "self"


class GeometryConfig:
    """The geometry experiments of a validated config (WorkflowConfig.geometry)."""

    def __init__(self, wf: WorkflowConfig):
        self.wf = wf
        self.experiments = wf.geometry

    def norms(self, experiment: str) -> list[str]:
        return self.wf.norms(experiment)

    def svm_file(self, pattern: str, experiment: str) -> list[str]:
        """A train job's svm-geometry input (`pattern`: its path): none for other layouts."""
        return [pattern.format(experiment=experiment)] if experiment in self.experiments else []

    def train(self, experiment: str) -> dict:
        """What a train job reads of its svm-geometry file: the norms, each seed's
        identity of the file and the tokens whose SVMs it measures against; {} for other
        layouts."""
        if experiment not in self.experiments:
            return {}
        return {
            "norms": self.norms(experiment),
            "identities": self.wf.seed_identities("svm_geometry", experiment),
            "tokens": self.tokens(experiment),
        }

    def tokens(self, experiment: str) -> str:
        """Against which tokens' SVMs its runs are measured (config key `tokens`)."""
        return self.experiments[experiment].get("tokens", TOKENS_DEFAULT)

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
        optimizers (label, settings in words, expected norm) in config order, and its
        table's identity."""
        return {
            name: canonical(
                {
                    "title": e["title"] or name,
                    "description": data_model(e["data"]["model"]).description,
                    "data": e["data"],
                    "train": e["train"],
                    "seeds": e["seeds"],
                    "first_seed": e["first_seed"],
                    "norms": self.norms(name),
                    "tokens": self.tokens(name),
                    "attention": attention(e["data"]),
                    "order": list(e["optimizers"]),
                    "labels": {o: s.get("label", o) for o, s in e["optimizers"].items()},
                    "expected": {o: s.implicit_norm() for o, s in self.wf.specs(name).items()},
                    "settings": {o: s.caption() for o, s in self.wf.specs(name).items()},
                    # as configured: the figure draws each as its algorithm is drawn
                    "optimizers": e["optimizers"],
                    "identity": self.wf.identity("metrics", name),
                }
            )
            for name, e in self.experiments.items()
        }

    def default(self) -> list[str]:
        """The geometry experiments of the default build (`default_build`): their figure,
        results/geometry.pdf, is a target of `rule all`, and their tables claims inputs."""
        return [name for name, e in self.experiments.items() if e["default_build"]]

    def targets(self, figure: str) -> list[str]:
        """`rule all`'s geometry figure (`figure`: its path), if any geometry experiment is
        of the default build."""
        return [figure] if self.default() else []

    def claims_inputs(self, table: str) -> dict:
        """Claims inputs: the aggregate table of each default-build geometry experiment,
        named geometry/<name>, so that the claims job waits for it."""
        return {f"geometry/{name}": table.format(experiment=name) for name in self.default()}

    def claims_settings(self, name: str) -> dict:
        """What the claims read of the geometry experiment `name` (as
        WorkflowConfig.claims_settings of the others, with its norms and data model)."""
        e = self.experiments[name]
        return {
            "layout": e["layout"],
            "seeds": e["seeds"],
            "optimizers": {o: self.wf.optimizer(name, o) for o in e["optimizers"]},
            "labels": {o: s.get("label", o) for o, s in e["optimizers"].items()},
            "paper_figure": None,
            "norms": self.norms(name),
            "tokens": self.tokens(name),
            "first_seed": e["first_seed"],
            "tuning_seed": e.get("tuning_seed"),  # None: no seed of it chose a constant
            "dataset": e["data"]["model"],
            "data": data_name(e["data"]["model"], e["data"].get("params", {})),
        }

    def claims_built(self, table: str) -> dict:
        """Claims params: what the claims read of each geometry experiment of the default
        build (its table an input) and of each other one whose aggregate table (`table`, a
        pattern of {experiment}) this build holds, as the real-data tables
        (WorkflowConfig.claims_real_built); without any, the claims' section "Beyond the
        paper" reads "not measured" (BUILD_HINT)."""
        built = {}
        default = self.default()
        for name in self.experiments:
            path = table.format(experiment=name)
            if name in default or os.path.exists(path):
                built[name] = {
                    **self.claims_settings(name),
                    "identity": self.wf.identity("metrics", name),
                    "table": path,
                    "optional": name not in default,  # outside the default build
                }
        return built
