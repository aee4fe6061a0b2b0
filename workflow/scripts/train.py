"""Train one (experiment, optimizer, seed) -> metrics Parquet and final parameters.

attnbias.training.dispatch picks the backend: float64 on `auto` or `cpu` trains with the
compiled kernel, without importing torch; `cuda[:N]` and float32 with torch.
"""

import logging

from attnbias.training import dispatch
from attnbias.workflow import io, job, joblog

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.workflow.job)
joblog.start(snakemake)
wc, p = snakemake.wildcards, snakemake.params
dataset = io.load_data(snakemake.input.data, p.data)
solution = io.load_svm(snakemake.input.svm, dataset, p.svm)
try:
    iterations, metrics, final, info = dispatch.run(
        dataset,
        solution,
        p.train,
        p.optimizer,
        device=p.device,
        dtype=p.dtype,
        threads=snakemake.threads,
    )
except (FloatingPointError, ValueError) as err:  # name the run: which job of many failed
    raise type(err)(
        f"experiment {wc.experiment}, optimizer {wc.optimizer}, seed {wc.seed}: {err}"
    ) from err
logging.info(
    "trained on %s (backend %s); final metrics: %s",
    info["device"],
    info["backend"],
    {name: float(values[-1]) for name, values in metrics.items()},
)
table = io.metrics_table(wc.experiment, wc.optimizer, int(wc.seed), iterations, metrics)
# the resolved device and backend (`auto` may mean CUDA), for the figures' provenance
table = io.with_identity(io.with_run_info(table, info), p.identity)
io.save_table(snakemake.output.metrics, table)
io.save_npz(snakemake.output.final, final, dict(p.identity, kind="final"))
