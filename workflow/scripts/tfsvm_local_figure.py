"""Draw results/tfsvm_local.pdf (PNG, caption, provenance) from the local runs'
curves and summary."""

import pandas as pd

from attnbias.figures import neighbours_local_figures
from attnbias.workflow import io, joblog, provenance

joblog.start(snakemake)
record = provenance.of_job(
    snakemake, figure="tfsvm_local", title=neighbours_local_figures.TFSVM_TITLE
)
neighbours_local_figures.draw_tfsvm(
    pd.read_csv(snakemake.input.csv),
    io.load_json(snakemake.input.summary),
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
