"""A sweep's tables and figure from its points' runs (sweep_tables, sweep_figure)."""

from pathlib import Path

import pandas as pd

from attnbias.figures import algorithm_style
from attnbias.optim.spec import resolve
from attnbias.studies import sweep_figure, sweep_tables
from attnbias.workflow import io, joblog, parquet, provenance

joblog.start(snakemake)
p = snakemake.params
sweep = p.sweep  # the grid, identities, axes, claims, legend (common.smk)


def load(paths) -> pd.DataFrame:
    """Each point's file, checked to be that point's (its name is the file's stem)."""
    return pd.concat(
        [parquet.load_frame(path, sweep["identities"][Path(path).stem]) for path in paths],
        ignore_index=True,
    )


runs, curves = load(snakemake.input.runs), load(snakemake.input.curves)
grid = pd.DataFrame(sweep["grid"])
long, points, verdicts = sweep_tables.tables(runs, curves, grid, p.needed, sweep["claims"])
io.save_csv(snakemake.output.csv, long)
io.save_csv(snakemake.output.points, points)
io.save_csv(snakemake.output.verdicts, verdicts)
sweep_figure.log_verdicts(verdicts)
name = snakemake.wildcards.sweep
title = sweep_figure.title(name, p.config["sweeps"][name]["base"], sweep["axes"])
base = p.config["experiments"][p.config["sweeps"][name]["base"]]
# each optimizer drawn as its algorithm is in every figure, at the base's settings
specs = resolve(base["optimizers"], real=False)  # once, from the config
algorithms = algorithm_style.algorithms_of(specs, base["layout"])
record = provenance.of_job(snakemake, figure=f"sweeps/{name}", title=title)
sweep_figure.draw(
    long,
    points,
    verdicts,
    axes=sweep["axes"],
    metrics=p.metrics,
    legend=sweep["legend"],
    algorithms=algorithms,
    title=title,
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
