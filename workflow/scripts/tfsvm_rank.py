"""TF-as-SVM's SVM ranks over the config's grid (neighbours.tfsvm_rank): the per-cell table
results/tfsvm_rank.csv and the figure results/tfsvm_rank.pdf (PNG, caption, provenance)."""

from attnbias.figures import neighbours_figures
from attnbias.neighbours import rank_grid
from attnbias.workflow import io, joblog, provenance

joblog.start(snakemake)
settings = snakemake.params.settings
table = rank_grid.table(settings)
io.save_csv(snakemake.output.csv, table)
record = provenance.of_job(snakemake, figure="tfsvm_rank", title=neighbours_figures.RANK_TITLE)
neighbours_figures.draw_rank(
    table,
    settings,
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
