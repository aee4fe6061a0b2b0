"""TF-as-SVM's SVM ranks over the config's grid (neighbours.tfsvm_rank): the per-cell
table results/tfsvm_rank.csv (the SVMs solved here; the figure is another job's)."""

from attnbias.neighbours import rank_grid
from attnbias.workflow import io, joblog

joblog.start(snakemake)
io.save_csv(snakemake.output.csv, rank_grid.table(snakemake.params.settings))
