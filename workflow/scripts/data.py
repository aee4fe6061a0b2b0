"""Generate one dataset (experiment, seed) -> results/data/{experiment}/seed{seed}.npz."""

import logging

from attnbias.data import hypotheses, models
from attnbias.data.missing import MissingDataError
from attnbias.workflow import io, job, joblog

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.workflow.job)
joblog.start(snakemake)
config = snakemake.params.data
try:
    dataset = models.generate(config["model"], int(snakemake.wildcards.seed), config["params"])
except MissingDataError as err:  # fig9's MNIST files: the key is this experiment's root
    key = f"experiments.{snakemake.wildcards.experiment}.data.params.root"
    raise MissingDataError(err.dataset, err.path, key, err.how) from None
logging.info("assumption quantities: %s", models.assumption_report(dataset))
hypotheses_report = hypotheses.report(dataset)
logging.info("hypotheses: %s", hypotheses_report)
logging.info("%s", hypotheses.describe(hypotheses_report))
# stored with the data: the figure and claims jobs read it instead of measuring it again
io.save_npz(snakemake.output[0], dataset, snakemake.params.identity, hypotheses_report)
