"""Generate every seed's dataset of one experiment -> results/data/{experiment}.npz."""

import logging

from attnbias.data import hypotheses, models
from attnbias.data.missing import MissingDataError
from attnbias.workflow import joblog, npz

joblog.start(snakemake)
p = snakemake.params
experiment = snakemake.wildcards.experiment
config = p.data
datasets, reports = {}, {}
for seed in p.seeds:
    try:
        datasets[seed] = models.generate(config["model"], seed, config["params"])
    except MissingDataError as err:  # fig9's MNIST files: the key is this experiment's root
        key = f"experiments.{experiment}.data.params.root"
        raise MissingDataError(err.dataset, err.path, key, err.how) from None
    logging.info(
        "seed %d: assumption quantities: %s", seed, models.assumption_report(datasets[seed])
    )
    reports[seed] = hypotheses.report(datasets[seed])
    logging.info("seed %d: hypotheses: %s", seed, reports[seed])
    logging.info("seed %d: %s", seed, hypotheses.describe(reports[seed]))
# stored with the data: the figure and claims jobs read them instead of measuring again
identities = {ident["seed"]: ident for ident in p.identities}
npz.save_seeds(snakemake.output[0], datasets, identities, reports)
