"""The claims at each value of one constant that the paper lost and we chose (the config's
`claims_robustness`; the column "robustness" of the claims table, attnbias.claims.robustness).

A constant sets one value at dotted key paths of one or more experiments (sweep_grid.apply,
as a sweep's grid does). At each value, only the runs whose settings change are trained
again (all of an experiment's where its training settings change), on that experiment's own
data and SVMs (the default build's files), with the backend the training jobs use, every
seed in one batch; every other run is the default build's, bitwise. The claims are measured
on the experiments the constant sets and on those sharing their data, training and layout
(whose bit-identical runs give their rows once, attnbias.claims.layouts.duplicates), so at
our value they are the default table's rows.

A geometry experiment's runs (beyond the paper) log each norm's measures against its
svm-geometry file's SVMs (with_geometry), which a retrained run logs alike
(svm_geometry_file.GeometrySVMs.extra_metrics, as the train jobs).

A row whose outcome at a value differs from ours is also judged on each seed alone (every
seed must pass a row): the number of seeds that give the value's outcome by themselves.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from attnbias.claims.inputs import ExperimentInputs, claims_arguments
from attnbias.claims.layouts import claims
from attnbias.optim.spec import resolve
from attnbias.studies.sweep_grid import apply
from attnbias.workflow import parquet
from attnbias.workflow.config import canonical
from attnbias.workflow.svm_geometry_file import GeometrySVMs
from attnbias.workflow.train_job import train_seeds

# what a point's file holds of each row (attnbias.claims.robustness compares them)
COLUMNS = ("value", "key", "experiment", "claim", "kind", "category", "outcome", "verdict",
           "mean", "low", "high", "value_text", "seeds_alike", "seeds")  # fmt: skip
NOT_JUDGED = -1  # seeds_alike of a row that was not judged seed by seed (its outcome is ours)


def point_settings(paths: dict[str, list[str]], settings: dict[str, dict], value) -> dict:
    """Each experiment's settings with `value` set at its key paths (`paths`: experiment ->
    dotted key paths; an experiment not named keeps its settings)."""
    return {
        name: apply(s, dict.fromkeys(paths[name], value)) if name in paths else s
        for name, s in settings.items()
    }


def retrained(base: dict, point: dict) -> list[str]:
    """The optimizers whose runs change from `base` to `point` (an experiment's settings):
    every one where the training settings change, else those whose own settings do."""
    if canonical(base["train"]) != canonical(point["train"]):
        return list(point["optimizers"])
    return [
        o
        for o, settings in point["optimizers"].items()
        if canonical(settings) != canonical(base["optimizers"][o])
    ]


def with_geometry(inputs: ExperimentInputs, path, settings: dict, expect=None) -> ExperimentInputs:
    """A geometry experiment's `inputs` with its svm-geometry file's SVMs (`path`; `settings`:
    the experiment's claims settings with `train`; `expect`: the file's seed identities)."""
    svms = GeometrySVMs.load(path, inputs.datasets, settings["norms"],
                             settings["train"]["train_u"], expect,
                             settings.get("tokens", "optimal"))  # fmt: skip
    return replace(inputs, geometry=svms)


def train(name: str, settings: dict, inputs: ExperimentInputs, optimizers: list[str],
          **backend) -> ExperimentInputs:  # fmt: skip
    """`inputs` with the runs of `optimizers` trained again under `settings` (the train
    jobs' numbers: train_job.train_seeds, parquet.metrics_table, with a geometry experiment's
    measures), in the aggregate's row order."""
    if not optimizers:
        return inputs
    seeds = list(inputs.datasets)
    datasets = [inputs.datasets[s] for s in seeds]
    solutions = [inputs.solutions[s] for s in seeds]
    tables, margins = [], dict(inputs.u_margins or {})
    specs = resolve({opt: settings["optimizers"][opt] for opt in optimizers}, real=False)
    for opt, spec in specs.items():
        extra = {}
        if inputs.geometry is not None:  # each norm's measures, as the train jobs log them
            extra["extra_metrics"] = inputs.geometry.extra_metrics(inputs.datasets, seeds, spec)
        iterations, metrics, finals, _ = train_seeds(
            datasets, solutions, settings["train"], spec, **backend, **extra
        )
        tables += [
            parquet.metrics_table(name, opt, seed, iterations, metric).to_pandas()
            for seed, metric in zip(seeds, metrics, strict=True)
        ]
        if inputs.u_margins is not None:
            margins[opt] = inputs.margins(dict(zip(seeds, finals, strict=True)))
    kept = inputs.table[~inputs.table["optimizer"].isin(optimizers)]
    table = pd.concat([t for t in (kept, *tables) if len(t)], ignore_index=True)
    # the aggregate's order (attnbias.workflow.parquet.concat_tables)
    table = table.sort_values(["optimizer", "seed", "metric", "iteration"], kind="stable")
    return replace(inputs, table=table.reset_index(drop=True),
                   u_margins=margins if inputs.u_margins is not None else None)  # fmt: skip


def one_seed(inputs: ExperimentInputs, index: int) -> ExperimentInputs:
    """The inputs of the `index`-th seed alone."""
    seed = list(inputs.datasets)[index]
    margins = inputs.u_margins
    return ExperimentInputs(
        inputs.table[inputs.table["seed"] == seed],
        {seed: inputs.datasets[seed]},
        {seed: inputs.solutions[seed]},
        [inputs.reports[index]],
        None if margins is None else {o: [m[index]] for o, m in margins.items()},
        inputs.geometry,
    )


def measure(settings: dict, inputs: dict[str, ExperimentInputs]) -> pd.DataFrame:
    """The claims table of the experiments `settings` (claims settings with `train`) on
    `inputs`, less the statements no run measures."""
    table = claims(settings, *claims_arguments(inputs))
    return table[table["kind"] != "not measured"]


def points(paths: dict[str, list[str]], values: list, ours, settings: dict,
           inputs: dict[str, ExperimentInputs], **backend) -> pd.DataFrame:  # fmt: skip
    """The claims at each of `values` (ours among them) of a constant set at `paths`, on the
    experiments of `settings` (name -> claims settings with `train`; the default build's
    runs in `inputs`): one row per row of the claims table and value (COLUMNS). `backend`:
    train_job.train_seeds's device, dtype and threads."""
    ours_table = measure(settings, inputs).set_index("key")
    seeds = {n: len(e.datasets) for n, e in inputs.items()}
    out = []
    for value in values:
        point = point_settings(paths, settings, value)
        changed = {
            name: train(
                name, point[name], inputs[name], retrained(settings[name], point[name]), **backend
            )
            for name in settings
        }
        # ours where no run changed (a constant setting several keys, one value for all,
        # may change runs at our first key's value: then it is measured like any other)
        same = value == ours and not any(retrained(settings[n], point[n]) for n in settings)
        table = ours_table.reset_index() if same else measure(point, changed)
        table = table.assign(
            value=float(value),
            seeds_alike=NOT_JUDGED,
            seeds=[seeds[experiment_of(k, seeds)] for k in table["key"]],
        )
        ours_outcome = table["key"].map(ours_table["outcome"])  # NaN: a row ours lacks
        flipped = ours_outcome.notna() & ours_outcome.ne(table["outcome"])
        if flipped.any():
            table.loc[flipped, "seeds_alike"] = _alike(point, changed, table[flipped])
        out.append(table[list(COLUMNS)])
    return pd.concat(out, ignore_index=True)


def experiment_of(key: str, names) -> str:
    """The experiment of a row's key ("<experiment> <statement's key>"), among `names`."""
    return max((n for n in names if key.startswith(f"{n} ")), key=len)


def _alike(settings: dict, inputs: dict[str, ExperimentInputs], rows: pd.DataFrame) -> list:
    """For each of `rows`: on how many seeds alone the row gives its outcome."""
    count = dict.fromkeys(rows["key"], 0)
    for index in range(max(len(e.datasets) for e in inputs.values())):
        alone = {n: one_seed(e, index) for n, e in inputs.items() if index < len(e.datasets)}
        outcomes = measure(settings, alone).set_index("key")["outcome"]
        for key, outcome in zip(rows["key"], rows["outcome"], strict=True):
            count[key] += int(outcomes.get(key) == outcome)
    return [count[key] for key in rows["key"]]
