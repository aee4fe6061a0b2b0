"""Train every seed of one (experiment, optimizer) -> per seed, metrics Parquet and final
parameters.

attnbias.training.dispatch picks the backend: float64 on `auto` or `cpu` trains with the
compiled kernel, without importing torch; `cuda[:N]` and float32 with torch. The seeds run
one after another in this one process: the job's start, not their arithmetic, was the cost.
"""

import logging

from attnbias.training import dispatch
from attnbias.workflow import io, job, joblog

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.workflow.job)
joblog.start(snakemake)
wc, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
runs = zip(p.seeds, p.identities, p.data, p.svm, strict=True)
files = zip(i.data, i.svm, o.metrics, o.final, strict=True)
for (seed, identity, data_identity, svm_identity), (data, svm, metrics_path, final_path) in zip(
    runs, files, strict=True
):
    dataset = io.load_data(data, data_identity)
    solution = io.load_svm(svm, dataset, svm_identity)
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
    except (FloatingPointError, ValueError) as err:  # name the run: which of many failed
        raise type(err)(
            f"experiment {wc.experiment}, optimizer {wc.optimizer}, seed {seed}: {err}"
        ) from err
    logging.info(
        "seed %d trained on %s (backend %s); final metrics: %s",
        seed,
        info["device"],
        info["backend"],
        {name: float(values[-1]) for name, values in metrics.items()},
    )
    table = io.metrics_table(wc.experiment, wc.optimizer, seed, iterations, metrics)
    # the resolved device and backend (`auto` may mean CUDA), for the figures' provenance
    table = io.with_identity(io.with_run_info(table, info), identity)
    io.save_table(metrics_path, table)
    io.save_npz(final_path, final, dict(identity, kind="final"))
