"""Draw results/attentionmd_joint.pdf (PNG, caption, provenance) from the joint run's
curves and summary."""

import pandas as pd

from attnbias.figures import neighbours_figures
from attnbias.workflow import io, joblog, provenance

joblog.start(snakemake)
record = provenance.of_job(
    snakemake, figure="attentionmd_joint", title=neighbours_figures.JOINT_TITLE
)
neighbours_figures.draw_joint(
    pd.read_csv(snakemake.input.csv),
    io.load_json(snakemake.input.summary),
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
