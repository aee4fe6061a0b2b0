"""AttentionMD's local-convergence runs (neighbours.attentionmd_local): the divergence
curves results/attentionmd_local.csv, the final (run p, SVM p) table _final.csv and the
summary .json (the figure is another job's)."""

from attnbias.neighbours import local_run
from attnbias.workflow import io, joblog

joblog.start(snakemake)
curves, finals = local_run.run(snakemake.params.settings)
io.save_csv(snakemake.output.csv, curves)
io.save_csv(snakemake.output.final, finals)
io.save_json(snakemake.output.summary, local_run.summary(finals) | dict(snakemake.params.settings))
