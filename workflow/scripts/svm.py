"""Solve W-SVM (and u-SVM when u is trained) for every seed of one experiment
-> results/svm/{experiment}/seed{seed}.npz."""

import logging

from attnbias.data import hypotheses
from attnbias.svm import max_margin
from attnbias.workflow import io, joblog

joblog.start(snakemake)
p = snakemake.params
files = zip(snakemake.input.data, snakemake.output.seeds, strict=True)
for seed, identity, data_identity, (data, path) in zip(
    p.seeds, p.identities, p.data, files, strict=True
):
    name = f"experiment {p.experiment}, seed {seed}"
    dataset = io.load_data(data, data_identity)
    solutions = max_margin.solve_for_dataset(dataset, p.train_u, name)
    for line in max_margin.describe(solutions):
        logging.info("seed %d: %s", seed, line)
    arrays = max_margin.to_arrays(solutions)
    # the hypotheses that need the solution (u_mm), stored with it for the figure and claims
    svm_hypotheses = hypotheses.svm_report(dataset, arrays)
    logging.info("seed %d: hypotheses that need the SVM solution: %s", seed, svm_hypotheses)
    io.save_npz(path, arrays, identity, svm_hypotheses)
