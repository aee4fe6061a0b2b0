"""A build's results, as the docs' numbers read them: the claims table by row key, the
aggregate tables (results/<experiment>/metrics.parquet), the data hypotheses, the sweeps'
tables (results/sweeps/<name>_points.csv, long: <name>.csv) and the claims' provenance.

A file or claims row that is not there raises Unbuilt, naming it; the checker decides
whether that is a fault (the default build must have it) or "not built here" (an optional
target's).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from attnbias.workflow import csvcells

ROBUSTNESS = "results/claims_robustness.md"  # the optional target of the robustness tables


class Unbuilt(LookupError):
    """What the build lacks: a file, or a row of its claims table."""


class Build:
    """The results folder of one build (default `results`)."""

    def __init__(self, results: Path | str = "results"):
        self.results = Path(results)
        # per instance (a method's cache would hold every Build alive)
        self._tables: dict[str, pd.DataFrame] = {}
        self._records: dict[str, dict] = {}

    def path(self, relative: str) -> Path:
        path = self.results / relative
        if not path.exists():
            raise Unbuilt(str(path))
        return path

    def _read(self, relative: str, reader) -> pd.DataFrame:
        if relative not in self._tables:
            self._tables[relative] = reader(self.path(relative))
        return self._tables[relative]

    # the claims table
    def claims(self) -> pd.DataFrame:
        # written through csvcells (no cell a spreadsheet evaluates): read back as it was
        return self._read("claims.csv", lambda p: csvcells.read(p).set_index("key", drop=False))

    def row(self, key: str) -> pd.Series:
        table = self.claims()
        if key not in table.index:
            raise Unbuilt(f"the claims row {key!r} ({self.results / 'claims.csv'})")
        return table.loc[key]

    def provenance(self, name: str) -> dict:
        """The provenance record of results/<name> (its config, commit, date)."""
        relative = f"{name}.provenance.json"
        if relative not in self._records:
            self._records[relative] = json.loads(self.path(relative).read_text())
        return self._records[relative]

    def created(self, name: str = "claims") -> str:
        """The day results/<name> was written, YYYY-MM-DD."""
        return self.provenance(name)["created"][:10]

    def cap(self, experiment: str, optimizer: str) -> float:
        """An optimizer's step cap in the build's config (the claims job's record)."""
        settings = self.provenance("claims")["config"]["experiments"][experiment]["optimizers"]
        spec = settings[optimizer]
        return float(spec.get("max_step", spec.get("eta_max")))

    # the aggregate tables
    def metrics(self, experiment: str) -> pd.DataFrame:
        return self._read(f"{experiment}/metrics.parquet", pd.read_parquet)

    def series(self, experiment: str, optimizer: str, metric: str) -> pd.DataFrame:
        """iteration x seed values of one metric."""
        table = self.metrics(experiment)
        rows = table[(table["optimizer"] == optimizer) & (table["metric"] == metric)]
        if rows.empty:
            raise Unbuilt(f"{metric} of {optimizer} in {self.results / experiment}")
        return rows.pivot(index="iteration", columns="seed", values="value")

    def final(self, experiment: str, optimizer: str, metric: str) -> np.ndarray:
        """Each seed's value at the last logged iteration."""
        values = self.series(experiment, optimizer, metric)
        return values.loc[values.index.max()].to_numpy()

    def final_table(self, experiment: str) -> pd.DataFrame:
        """A real-data figure's or sweep's end points, one row per optimizer, with the
        tuning rule's choice (results/<experiment>_final.csv: realdata.final_values)."""
        return self._read(f"{experiment}_final.csv", pd.read_csv)

    def seeds(self, experiment: str) -> list:
        return sorted(self.metrics(experiment)["seed"].unique())

    def first_below(self, experiment: str, optimizer: str, threshold: float) -> np.ndarray:
        """Each seed's exact first t with 1 - cos(W_t, W_mm) < threshold (every step checked
        by the training loop); NaN on a seed that never crosses."""
        table = self.metrics(experiment)
        rows = table[
            (table["optimizer"] == optimizer)
            & (table["metric"] == f"first_gap_W_below_{threshold:g}")
        ]
        crossed = rows.groupby("seed")["value"].last()
        return crossed.reindex(self.seeds(experiment)).to_numpy(dtype=float)

    # the data
    def hypotheses(self, experiment: str) -> list[dict]:
        """Each seed's measured hypotheses (the data and SVM jobs' records)."""
        from attnbias.workflow import npz

        data, svm = (self.path(f"{kind}/{experiment}.npz") for kind in ("data", "svm"))
        return npz.hypotheses_by_seed(data, svm)

    # the sweeps (optional targets)
    def sweep_points(self, name: str) -> pd.DataFrame:
        """One row per point: its grid values, each claim (True/False), `<claim>_seeds`
        (on how many seeds it holds), `seeds`, the seed summaries `<metric>_<optimizer>`."""
        return self._read(f"sweeps/{name}_points.csv", pd.read_csv)

    def robustness_points(self, constant: str) -> pd.DataFrame:
        """The robustness target's points of `constant` (a key of config's
        claims_robustness.constants): one row per claims row and value tried
        (attnbias.studies.robustness_points.COLUMNS)."""
        return self._read(f"claims_robustness/{constant}.parquet", pd.read_parquet)

    def robustness_row(self, constant: str, value: float, key: str) -> pd.Series:
        """The claims row `key` as the robustness target measured it with `constant` at
        `value`."""
        points = self.robustness_points(constant)
        found = points[(points["key"] == key) & np.isclose(points["value"], value, atol=0)]
        if found.empty:
            raise ValueError(f"the robustness points of {constant} lack {key!r} at {value:g}")
        return found.iloc[0]

    def benchmarks(self, rule: str, pattern: str = "*") -> pd.DataFrame:
        """Snakemake's benchmark files of `rule` (results/benchmarks/<rule>/<pattern>.tsv),
        one row per file (a file of several rows, benchmark repeats: their sum), indexed
        by the file's path under the rule's folder without .tsv (a pattern of folders,
        "fig6_mnist5k/*/*", keeps every job apart): s (wall), cpu_time (user + sys), ..."""
        folder = self.path(f"benchmarks/{rule}")
        files = sorted(folder.glob(f"{pattern}.tsv"))
        if not files:
            raise Unbuilt(str(self.results / f"benchmarks/{rule}/{pattern}.tsv"))
        sums = {str(f.relative_to(folder)).removesuffix(".tsv"):
                pd.read_csv(f, sep="\t").sum(numeric_only=True) for f in files}  # fmt: skip
        return pd.DataFrame(sums).T

    def sweep_runs(self, name: str) -> pd.DataFrame:
        """One row per point x optimizer x seed: grid values and the sweep's metrics."""
        return self._read(f"sweeps/{name}.csv", pd.read_csv)

    def similarity(self, figure: str, dataset: str) -> pd.DataFrame:
        """A token-similarity figure's histogram of one dataset (one row per bin of cos,
        with the dataset's texts, pairs, identical-token pairs and share in the band)."""
        return self._read(f"{figure}/similarity/{dataset}.parquet", pd.read_parquet)
