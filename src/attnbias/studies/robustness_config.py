"""The workflow's reading of `claims_robustness` (the constants the paper lost and we chose,
measured around ours: attnbias.studies.robustness_points, attnbias.claims.robustness): what
each constant's job reads and trains, the summary's table, and what the claims job reads.

A constant's job measures the claims on the experiments it sets and on the default-build
experiments that share their data, training and layout (their bit-identical runs give their
rows once, so the rows keep the default table's keys), from the default build's files. A
constant may set the geometry experiments (beyond the paper; results/geometry.pdf's runs,
not of the default build): its job then reads their files as that target builds them, and
their svm-geometry files (the SVMs whose measures their retrained runs log).

With `default_build` the summary is a target of `rule all` and an input of the claims job;
without, it is a named target (`<results>/claims_robustness.md`) that the claims job reads
where this build holds it (params, as the real-data tables: a table that appears, or whose
content changes, reruns the claims job only), else its column reads "not measured". A
constant with its own `default_build` (fig2's caps: seconds of training) is measured in the
default build all the same: its points and a partial summary
(`<results>/claims_robustness_default.md`, the same job on those constants only) are an
input of the claims job, which reads them where the whole summary is not built, naming the
constants left unmeasured (`partial`).
"""

from __future__ import annotations

import os

from attnbias.workflow import parquet, store
from attnbias.workflow.config import WorkflowConfig, at, canonical
from attnbias.workflow.geometry_config import GeometryConfig

TARGET = "claims_robustness.md"
DEFAULT_TARGET = "claims_robustness_default.md"  # the constants of the default build only
BUILD_HINT = (
    f"build results/{TARGET} (snakemake -c2 results/{TARGET}), then the claims again "
    "(snakemake -c2)"
)


class RobustnessConfig:
    """The `claims_robustness` section of a validated config (WorkflowConfig.config)."""

    def __init__(self, wf: WorkflowConfig):
        self.wf = wf
        self.geometry = GeometryConfig(wf)
        section = wf.config.get("claims_robustness") or {}
        self.constants: dict[str, dict] = section.get("constants") or {}
        self.default_build = bool(section.get("default_build")) and bool(self.constants)
        # the constants the default build measures: every one with the section's
        # default_build, else those with their own
        self.in_default: list[str] = [
            name
            for name, entry in self.constants.items()
            if self.default_build or entry.get("default_build")
        ]

    def paths(self, constant: str) -> dict[str, list[str]]:
        """Experiment -> the dotted key paths the constant sets in it."""
        return {
            name: [keys] if isinstance(keys, str) else list(keys)
            for name, keys in self.constants[constant]["set"].items()
        }

    def ours(self, constant: str):
        """Our value: the config's at the constant's first key path."""
        name, keys = next(iter(self.paths(constant).items()))
        return at(self.wf.experiments[name], *keys[0].split("."))

    def experiments(self, constant: str) -> list[str]:
        """The experiments the constant's claims read: those it sets and the default-build
        (or geometry) experiments with the same data, training and layout as one of them:
        the default build's in config order, then the geometry experiments'."""
        set_ = self.paths(constant)
        shared = {self._runs_of(name) for name in set_}
        names = [*self.wf.default, *self.wf.geometry]
        return [n for n in names if n in set_ or self._runs_of(n) in shared]

    def _runs_of(self, name: str) -> str:
        e = self.wf.experiments[name]
        return store.canonical_json(canonical([e["data"], e["train"], e["layout"]]))

    def settings(self, constant: str) -> dict:
        """Params: each experiment's claims settings and its training settings."""
        names = self.experiments(constant)
        claims = self.wf.claims_settings()
        claims.update({n: self.geometry.claims_settings(n) for n in names if n not in claims})
        return {n: {**claims[n], "train": at(self.wf.experiments[n], "train")} for n in names}

    def point(self, constant: str) -> dict:
        """Params: the constant as the points' job reads it (key paths, values, ours)."""
        entry = self.constants[constant]
        return canonical(
            {"paths": self.paths(constant), "values": entry["values"], "ours": self.ours(constant)}
        )

    def inputs(self, metrics: str, data: str, svm: str, final: str, svm_geometry: str):
        """Input of a constant's job: its experiments' files, named as the claims job's,
        and each geometry experiment's svm-geometry file (svm_geometry/<name>)."""

        def get(wildcards):
            names = self.experiments(wildcards.constant)
            geometry = {
                f"svm_geometry/{n}": svm_geometry.format(experiment=n)
                for n in names
                if n in self.wf.geometry
            }
            return self.wf.claims_inputs(metrics, data, svm, final, names) | geometry

        return get

    def input_identities(self, metrics: str, data: str, svm: str, final: str, svm_geometry: str):
        """Params of a constant's job: each input file -> its identity."""

        def get(wildcards):
            names = self.experiments(wildcards.constant)
            geometry = {
                svm_geometry.format(experiment=n): self.wf.seed_identities("svm_geometry", n)
                for n in names
                if n in self.wf.geometry
            }
            return self.wf.claims_identities(metrics, svm, data, final, names) | geometry

        return get

    def identity(self, constant: str) -> dict:
        """A constant's points file: the constant, its experiments' runs and settings."""
        used = {
            "point": self.point(constant),
            "settings": self.settings(constant),
            "runs": {n: self.wf.identity("metrics", n) for n in self.experiments(constant)},
            "device": self.wf.config["device"],
            "dtype": self.wf.config["dtype"],
        }
        return store.identity("claims robustness points", constant, used)

    def described(self, names=None) -> dict:
        """Params of the summary and the claims: each constant in words (label, ours, the
        values, the plausible range and why, the kinds of test it is read on, the key paths);
        `names`: those constants only (default every one)."""
        return {
            name: canonical(
                {
                    "label": entry["label"],
                    "ours": self.ours(name),
                    "values": entry["values"],
                    "plausible": entry["plausible"],
                    "why": entry["why"],
                    "kinds": entry.get("kinds"),
                    "set": self.paths(name),
                }
            )
            for name, entry in self.constants.items()
            if names is None or name in names
        }

    def identities(self, names=None) -> dict:
        """Params of a summary: each constant's points file identity (`names`: those only)."""
        return {n: self.identity(n) for n in self.constants if names is None or n in names}

    def summary_identity(self, names=None) -> dict:
        """The summary table's: every constant's points file and words (`names`: the partial
        summary's constants; its identity names them, so it is never the whole one's)."""
        used = {"points": self.identities(names), "described": self.described(names)}
        which = "claims" if names is None else f"claims, constants {', '.join(names)} only"
        return store.identity("claims robustness", which, used)

    def point_files(self, pattern: str, names=None) -> dict:
        """Input of a summary: each constant's points file (`pattern` of {constant};
        `names`: those only)."""
        return {
            n: pattern.format(constant=n) for n in self.constants if names is None or n in names
        }

    def partial(self) -> bool:
        """Whether the default build measures some constants but not all (a partial summary)."""
        return not self.default_build and bool(self.in_default)

    def targets(self, summary: str) -> list[str]:
        """`rule all`'s robustness summary (`summary`: its path) where default_build."""
        return [summary] if self.default_build else []

    def claims_input(self, table: str, partial: str) -> dict:
        """Input of the claims job: the summary table where default_build, the partial one
        (`partial`: its path) where some constants are of the default build."""
        if self.default_build:
            return {"robustness": table}
        return {"robustness_default": partial} if self.partial() else {}

    def claims_table(self, table: str, partial: str) -> dict:
        """Params of the claims job: the summary table it reads (`table`, its path) and the
        identity it must hold, with the recorded checksum of the file where it is not an
        input (a rebuilt table reruns the claims); where only the default build's constants
        are measured, the partial summary (`partial`, an input) and the constants it lacks
        ("unmeasured", with how to measure them); else why there is none ("absent")."""
        if not self.constants:
            return {"absent": "the config's claims_robustness names no constant"}
        found = {"table": str(table), "identity": self.summary_identity()}  # a plain path
        if self.default_build:
            return found
        default = None
        if self.partial():
            others = [n for n in self.constants if n not in self.in_default]
            default = {
                "table": str(partial),
                "identity": self.summary_identity(self.in_default),
                "unmeasured": others,
                "hint": BUILD_HINT,
            }
        if os.path.exists(table):  # the whole table, or (not of this config) the partial one
            return {**found, "sha256": recorded_sha256(table), "fallback": default}
        return default or {"absent": f"{BUILD_HINT} to measure it"}


def recorded_sha256(path) -> str:
    """The checksum a Parquet file's writer recorded (its schema metadata only: cheap to
    read while the workflow parses)."""
    import pyarrow.parquet as pq

    return (pq.read_schema(path).metadata or {}).get(parquet.CHECKSUM_META, b"").decode()
