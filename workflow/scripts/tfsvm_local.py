"""TF-as-SVM's local-convergence runs (neighbours.tfsvm_local): the correlation curves
results/tfsvm_local.csv, the per-run table _final.csv and the summary .json (the figure
is another job's)."""

from attnbias.neighbours import tfsvm_local
from attnbias.workflow import io, joblog

joblog.start(snakemake)
curves, finals = tfsvm_local.run(snakemake.params.settings)
io.save_csv(snakemake.output.csv, curves)
io.save_csv(snakemake.output.final, finals)
io.save_json(
    snakemake.output.summary, tfsvm_local.summary(finals) | dict(snakemake.params.settings)
)
