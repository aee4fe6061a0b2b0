"""Solve W-SVM (and u-SVM when u is trained) -> results/svm/{experiment}/seed{seed}.npz."""

import logging

from attnbias import io, job, joblog, svm

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.job)
joblog.start(snakemake)
name = f"experiment {snakemake.wildcards.experiment}, seed {snakemake.wildcards.seed}"
solutions = svm.solve_for_dataset(
    io.load_data(snakemake.input.data, snakemake.params.data), snakemake.params.train_u, name
)
for line in svm.describe(solutions):
    logging.info(line)
io.save_npz(snakemake.output[0], svm.to_arrays(solutions), snakemake.params.identity)
