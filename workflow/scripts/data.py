"""Generate one dataset (experiment, seed) -> results/data/{experiment}/seed{seed}.npz."""

import logging

from attnbias import data, io, job

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.job)
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
config = snakemake.params.data
dataset = data.generate(config["model"], int(snakemake.wildcards.seed), config["params"])
logging.info("assumption quantities: %s", data.assumption_report(dataset))
io.save_npz(snakemake.output[0], dataset)
