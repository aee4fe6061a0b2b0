"""Train one (experiment, optimizer, seed) -> metrics Parquet and final parameters."""

import logging

import torch

from attnbias import io, train

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
torch.set_num_threads(snakemake.threads)
wc = snakemake.wildcards
iterations, metrics, final, device = train.run(
    io.load_data(snakemake.input.data),
    io.load_npz(snakemake.input.svm, ("W_mm",)),
    snakemake.params.train,
    snakemake.params.optimizer,
    device=snakemake.params.device,
    dtype=snakemake.params.dtype,
)
logging.info(
    "trained on %s; final metrics: %s",
    device,
    {name: float(values[-1]) for name, values in metrics.items()},
)
table = io.metrics_table(wc.experiment, wc.optimizer, int(wc.seed), iterations, metrics)
# the resolved device (`auto` may become CUDA), for the figures' provenance
io.save_table(snakemake.output.metrics, io.with_run_info(table, train.device_info(device)))
io.save_npz(snakemake.output.final, final)
