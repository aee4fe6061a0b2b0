"""Solve W-SVM (and u-SVM when u is trained) for every seed of one experiment
-> results/svm/{experiment}.npz."""

import logging

from attnbias.data import hypotheses
from attnbias.svm import max_margin
from attnbias.workflow import io, joblog

joblog.start(snakemake)
p = snakemake.params
datasets = io.load_data(snakemake.input.data, p.data)
solutions, reports = {}, {}
for seed, dataset in datasets.items():
    name = f"experiment {snakemake.wildcards.experiment}, seed {seed}"
    solved = max_margin.solve_for_dataset(dataset, p.train_u, name)
    for line in max_margin.describe(solved):
        logging.info("seed %d: %s", seed, line)
    solutions[seed] = max_margin.to_arrays(solved)
    # the hypotheses that need the solution (u_mm), stored with it for the figure and claims
    reports[seed] = hypotheses.svm_report(dataset, solutions[seed])
    logging.info("seed %d: hypotheses that need the SVM solution: %s", seed, reports[seed])
identities = {ident["seed"]: ident for ident in p.identities}
io.save_seeds(snakemake.output[0], solutions, identities, reports)
