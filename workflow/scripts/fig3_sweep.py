"""The fig3 sweep's tables and figure from its per-point runs: which parts of Fig. 3's order
hold in which setting. The figure's provenance goes into its files and its sidecar JSON."""

import logging

import pandas as pd

from attnbias import io, provenance, sweep

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
p = snakemake.params
runs = pd.concat(map(pd.read_parquet, snakemake.input.runs), ignore_index=True)
long, per_setting = sweep.table(runs, tolerance=p.tolerance)
io.save_csv(snakemake.output.csv, long)
io.save_csv(snakemake.output.verdicts, per_setting)
logging.info("parts of the order that hold:\n%s", sweep.tally(per_setting).to_string(index=False))
record = provenance.of_job(snakemake, figure="fig3_sweep", title=sweep.TITLE)
sweep.draw(
    long,
    per_setting,
    legend=p.legend,
    tolerance=p.tolerance,
    outputs=[snakemake.output.pdf, snakemake.output.png],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
