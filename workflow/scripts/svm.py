"""Solve W-SVM (and u-SVM when u is trained) for every seed of one experiment
-> results/svm/{experiment}.npz."""

import logging

from attnbias.data import hypotheses
from attnbias.svm import max_margin
from attnbias.workflow import joblog, svm_job


def solve(dataset, name):
    solved = max_margin.solve_for_dataset(dataset, snakemake.params.train_u, name)
    return max_margin.to_arrays(solved), max_margin.describe(solved)


joblog.start(snakemake)
solutions, datasets = svm_job.solve_every_seed(snakemake, solve)
# the hypotheses that need the solution (u_mm), stored with it for the figure and claims
reports = {seed: hypotheses.svm_report(datasets[seed], solutions[seed]) for seed in solutions}
for seed, report in reports.items():
    logging.info("seed %d: hypotheses that need the SVM solution: %s", seed, report)
svm_job.save(snakemake, solutions, reports)
