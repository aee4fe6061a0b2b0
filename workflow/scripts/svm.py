"""Solve W-SVM (and u-SVM when u is trained) -> results/svm/{experiment}/seed{seed}.npz."""

import logging

from attnbias.data import hypotheses
from attnbias.svm import max_margin
from attnbias.workflow import io, job, joblog

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.workflow.job)
joblog.start(snakemake)
name = f"experiment {snakemake.wildcards.experiment}, seed {snakemake.wildcards.seed}"
dataset = io.load_data(snakemake.input.data, snakemake.params.data)
solutions = max_margin.solve_for_dataset(dataset, snakemake.params.train_u, name)
for line in max_margin.describe(solutions):
    logging.info(line)
arrays = max_margin.to_arrays(solutions)
# the hypotheses that need the solution (u_mm), stored with it for the figure and claims jobs
svm_hypotheses = hypotheses.svm_report(dataset, arrays)
logging.info("hypotheses that need the SVM solution: %s", svm_hypotheses)
io.save_npz(snakemake.output[0], arrays, snakemake.params.identity, svm_hypotheses)
