"""The W-SVM (and u-SVM when u is trained) under each of the experiment's norms, for every
seed -> results/svm_geometry/{experiment}.npz (attnbias.svm.geometry)."""

from attnbias.svm import geometry
from attnbias.workflow import joblog, svm_job


def solve(dataset, name):
    p = snakemake.params
    solved, faces, lines = geometry.timed_solve(dataset, p.norms, p.train_u, name)
    return geometry.to_arrays(solved, faces), lines


joblog.start(snakemake)
solutions, _ = svm_job.solve_every_seed(snakemake, solve)
svm_job.save(snakemake, solutions)
