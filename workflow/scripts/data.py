"""Generate every seed's dataset of one experiment -> results/data/{experiment}/seed{seed}.npz."""

import logging

from attnbias.data import hypotheses, models
from attnbias.data.missing import MissingDataError
from attnbias.workflow import io, joblog

joblog.start(snakemake)
p = snakemake.params
experiment = p.experiment
config = p.data
for seed, identity, path in zip(p.seeds, p.identities, snakemake.output.seeds, strict=True):
    try:
        dataset = models.generate(config["model"], seed, config["params"])
    except MissingDataError as err:  # fig9's MNIST files: the key is this experiment's root
        key = f"experiments.{experiment}.data.params.root"
        raise MissingDataError(err.dataset, err.path, key, err.how) from None
    logging.info("seed %d: assumption quantities: %s", seed, models.assumption_report(dataset))
    hypotheses_report = hypotheses.report(dataset)
    logging.info("seed %d: hypotheses: %s", seed, hypotheses_report)
    logging.info("seed %d: %s", seed, hypotheses.describe(hypotheses_report))
    # stored with the data: the figure and claims jobs read it instead of measuring it again
    io.save_npz(path, dataset, identity, hypotheses_report)
