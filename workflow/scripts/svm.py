"""Solve W-SVM (and u-SVM when u is trained) -> results/svm/{experiment}/seed{seed}.npz."""

import logging

from attnbias.svm import max_margin
from attnbias.workflow import io, job, joblog

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.workflow.job)
joblog.start(snakemake)
name = f"experiment {snakemake.wildcards.experiment}, seed {snakemake.wildcards.seed}"
solutions = max_margin.solve_for_dataset(
    io.load_data(snakemake.input.data, snakemake.params.data), snakemake.params.train_u, name
)
for line in max_margin.describe(solutions):
    logging.info(line)
io.save_npz(snakemake.output[0], max_margin.to_arrays(solutions), snakemake.params.identity)
