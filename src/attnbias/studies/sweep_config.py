"""The workflow's reading of the `sweeps:` config section, as plain Python.

workflow/rules/sweep.smk calls these with a job's wildcards (sweep, point). What a point's
training job reads (`experiment`, `metrics`) depends on that point's values and the base
experiment only, so adding a point reruns no other point, and a change to the base reruns
the points whose experiment it changes.
"""

from __future__ import annotations

from attnbias.optim.spec import resolve, without
from attnbias.studies import sweep_claims, sweep_grid
from attnbias.studies.sweep_metrics import PLUGINS
from attnbias.workflow import store
from attnbias.workflow.codedeps import generator_files, package_module_files, rule_files
from attnbias.workflow.config import canonical


class SweepConfig:
    def __init__(self, config: dict):
        self.config = config
        self.entries = config.get("sweeps") or {}
        self._points = {n: sweep_grid.points(e["grid"]) for n, e in self.entries.items()}

    def base(self, sweep: str) -> dict:
        """The base experiment, with the optimizers the sweep trains."""
        entry = self.entries[sweep]
        return sweep_grid.trained(entry, self.config["experiments"][entry["base"]])

    def points(self, sweep: str) -> dict[str, dict]:
        """Point name -> {key path: value}, in grid order."""
        return self._points[sweep]

    def experiment(self, sweep: str, point: str) -> dict:
        """What the point's job trains (no title or labels)."""
        entry = self.entries[sweep]
        values = self._points[sweep][point]
        return canonical(sweep_grid.point_experiment(entry, self.base(sweep), values))

    def loaded_code(self, sweep: str, point: str) -> list[str]:
        """The package's files a point's job loads by name rather than by an import, so that
        its script's code does not list them: its data model's own module (the point's job
        generates the data), the metric plugins (sweep_metrics.PLUGINS) and the modules of
        the rules it trains with (codedeps.rule_files)."""
        experiment = self.experiment(sweep, point)
        plugins = [f for module in PLUGINS for f in package_module_files(module)]
        rules_ = rule_files(o["rule"] for o in experiment["optimizers"].values())
        return sorted({*generator_files(experiment["data"]["model"]), *plugins, *rules_})

    def identity(self, sweep: str, point: str) -> dict:
        """What a point's files are: the sweep, the point and the sha256 of its experiment,
        stored in them and checked by the summary (a file of another point is refused)."""
        ident = store.identity("sweep point", sweep, self.experiment(sweep, point))
        return {**ident, "setting": point}

    def identities(self, sweep: str) -> dict[str, dict]:
        return {point: self.identity(sweep, point) for point in self._points[sweep]}

    def metrics(self, sweep: str) -> list[str]:
        """The metrics the point jobs compute: the entry's, then those its claims compare."""
        entry = self.entries[sweep]
        named = [c["metric"] for c in entry.get("claims", {}).values() if "metric" in c]
        return list(dict.fromkeys([*entry["metrics"], *named]))

    def claims(self, sweep: str) -> dict[str, dict]:
        """In config order: the order of the verdict table's rows."""
        return {k: canonical(v) for k, v in self.entries[sweep].get("claims", {}).items()}

    def grid_table(self, sweep: str) -> dict[str, list]:
        """Columns: point, then one per grid key (the summary joins its runs to these)."""
        points = self._points[sweep]
        keys = sweep_grid.keys(self.entries[sweep]["grid"])
        table = {"point": list(points)}
        for key in keys:
            table[key] = [values[key] for values in points.values()]
        return table

    def axes(self, sweep: str) -> list[dict]:
        """The swept axes for the figure: label (sweep_grid.titles: whose setting it is),
        key path(s) and values."""
        grid = self.entries[sweep]["grid"]
        return [
            {"label": label, "keys": list(axis), "values": next(iter(axis.values()))}
            for label, axis in zip(sweep_grid.titles(grid), sweep_grid.swept(grid), strict=True)
        ]

    def legend(self, sweep: str) -> dict[str, tuple[str, str]]:
        """Optimizer -> (label, a caption of its base settings)."""
        optimizers = self.base(sweep)["optimizers"]
        return {
            name: (optimizers[name].get("label", name), spec.caption())
            for name, spec in resolve(optimizers, real=False).items()
        }

    def claim_texts(self, sweep: str) -> dict[str, str]:
        return {name: sweep_claims.describe(c) for name, c in self.claims(sweep).items()}

    def figure_config(self, sweep: str) -> dict:
        """The summary's provenance: the entry, its base experiment, device and dtype."""
        entry = self.entries[sweep]
        return canonical(
            {
                "sweeps": {sweep: entry},
                # less the paper's figure: the claims table alone reads it
                "experiments": {entry["base"]: without(self.base(sweep), "paper_figure")},
                "device": self.config["device"],
                "dtype": self.config["dtype"],
            }
        )
