"""Train one (experiment, optimizer, seed) -> metrics Parquet and final parameters."""

import logging

import torch

from attnbias import io, joblog, train

joblog.start(snakemake)
torch.set_num_threads(snakemake.threads)
wc, p = snakemake.wildcards, snakemake.params
dataset = io.load_data(snakemake.input.data, p.data)
solution = io.load_svm(snakemake.input.svm, dataset, p.svm)
try:
    iterations, metrics, final, device = train.run(
        dataset,
        solution,
        p.train,
        p.optimizer,
        device=p.device,
        dtype=p.dtype,
    )
except (FloatingPointError, ValueError) as err:  # name the run: which job of many failed
    raise type(err)(
        f"experiment {wc.experiment}, optimizer {wc.optimizer}, seed {wc.seed}: {err}"
    ) from err
logging.info(
    "trained on %s; final metrics: %s",
    device,
    {name: float(values[-1]) for name, values in metrics.items()},
)
table = io.metrics_table(wc.experiment, wc.optimizer, int(wc.seed), iterations, metrics)
# the resolved device (`auto` may become CUDA), for the figures' provenance
table = io.with_identity(io.with_run_info(table, train.device_info(device)), p.identity)
io.save_table(snakemake.output.metrics, table)
io.save_npz(snakemake.output.final, final, dict(p.identity, kind="final"))
