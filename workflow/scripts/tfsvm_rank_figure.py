"""Draw results/tfsvm_rank.pdf (PNG, caption, provenance) from the rank table."""

import pandas as pd

from attnbias.figures import neighbours_figures
from attnbias.workflow import joblog, provenance

joblog.start(snakemake)
record = provenance.of_job(snakemake, figure="tfsvm_rank", title=neighbours_figures.RANK_TITLE)
neighbours_figures.draw_rank(
    pd.read_csv(snakemake.input.csv),
    snakemake.params.settings,
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
