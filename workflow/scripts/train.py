"""Train every seed of one (experiment, optimizer) -> per seed, metrics Parquet and final
parameters.

attnbias.training.dispatch picks the backend: float64 on `auto` or `cpu` trains with the
compiled kernel, without importing torch; `cuda[:N]` and float32 with torch. The seeds train
in one batch (dispatch.run_seeds): the job's start, not their arithmetic, is its cost.
"""

import logging

from attnbias.training import dispatch
from attnbias.workflow import io, joblog

joblog.start(snakemake)
wc, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
datasets = [io.load_data(path, identity) for path, identity in zip(i.data, p.data, strict=True)]
solutions = [
    io.load_svm(path, dataset, identity)
    for path, dataset, identity in zip(i.svm, datasets, p.svm, strict=True)
]
settings = dict(device=p.device, dtype=p.dtype, threads=snakemake.threads)


def train(seeds):
    """dispatch.run_seeds on `seeds` (positions in p.seeds)."""
    return dispatch.run_seeds(
        [datasets[k] for k in seeds], [solutions[k] for k in seeds], p.train, p.optimizer,
        **settings,
    )  # fmt: skip


try:
    iterations, metrics, finals, info = train(range(len(p.seeds)))
except (FloatingPointError, ValueError):
    # a batch's error names no run: train the seeds alone, and name the first that fails
    for k, seed in enumerate(p.seeds):
        try:
            train([k])
        except (FloatingPointError, ValueError) as err:
            raise type(err)(
                f"experiment {p.experiment}, optimizer {wc.optimizer}, seed {seed}: {err}"
            ) from err
    raise
for seed, identity, metric, final, metrics_path, final_path in zip(
    p.seeds, p.identities, metrics, finals, o.metrics, o.final, strict=True
):
    logging.info(
        "seed %d trained on %s (backend %s); final metrics: %s",
        seed,
        info["device"],
        info["backend"],
        {name: float(values[-1]) for name, values in metric.items()},
    )
    table = io.metrics_table(p.experiment, wc.optimizer, seed, iterations, metric)
    # the resolved device and backend (`auto` may mean CUDA), for the figures' provenance
    table = io.with_identity(io.with_run_info(table, info), identity)
    io.save_table(metrics_path, table)
    io.save_npz(final_path, final, dict(identity, kind="final"))
