"""What TF-as-SVM's svm_rank.ipynb would report on our instances (neighbours.tfsvm_scs):
SCS's nuclear SVM and its rank at their absolute 1e-7, beside the exact rank, one row per
instance (results/tfsvm_scs.csv, read by the neighbours' claims)."""

from attnbias.neighbours import scs_rank
from attnbias.workflow import io, joblog

joblog.start(snakemake)
io.save_csv(snakemake.output.csv, scs_rank.table(snakemake.params.settings))
