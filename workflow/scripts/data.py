"""Generate one dataset (experiment, seed) -> results/data/{experiment}/seed{seed}.npz."""

import logging

from attnbias import data, hypotheses, io

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
config = snakemake.params.data
dataset = data.generate(config["model"], int(snakemake.wildcards.seed), config["params"])
logging.info("assumption quantities: %s", data.assumption_report(dataset))
hypotheses_report = hypotheses.report(dataset)
logging.info("hypotheses: %s", hypotheses_report)
logging.info("%s", hypotheses.describe(hypotheses_report))
io.save_npz(snakemake.output[0], dataset)
