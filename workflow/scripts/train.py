"""Train one (experiment, optimizer, seed) -> metrics Parquet and final parameters.

float64 on `auto` or `cpu` trains with the compiled kernel (attnbias.fast), without
importing torch; `cuda[:N]` and float32 with torch (attnbias.train).
"""

import logging

from attnbias import fast, io, job

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.job)
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
wc = snakemake.wildcards
iterations, metrics, final, info = fast.run(
    io.load_data(snakemake.input.data),
    io.load_npz(snakemake.input.svm, ("W_mm",)),
    snakemake.params.train,
    snakemake.params.optimizer,
    device=snakemake.params.device,
    dtype=snakemake.params.dtype,
    threads=snakemake.threads,
)
logging.info(
    "trained on %s (backend %s); final metrics: %s",
    info["device"],
    info["backend"],
    {name: float(values[-1]) for name, values in metrics.items()},
)
table = io.metrics_table(wc.experiment, wc.optimizer, int(wc.seed), iterations, metrics)
# the resolved device and backend (`auto` may mean CUDA), for the figures' provenance
io.save_table(snakemake.output.metrics, io.with_run_info(table, info))
io.save_npz(snakemake.output.final, final)
