"""Train every seed of one (experiment, optimizer) -> one metrics table of every seed
(results/train/{experiment}/{optimizer}.parquet) and their final parameters (.final.npz).

attnbias.training.dispatch picks the backend: float64 on `auto` or `cpu` trains with the
compiled kernel, without importing torch; `cuda[:N]` and float32 with torch. The seeds train
in one batch (dispatch.run_seeds): the job's start, not their arithmetic, is its cost.
"""

import logging

import pyarrow as pa

from attnbias.training import dispatch
from attnbias.workflow import joblog, npz, parquet
from attnbias.workflow.svm_file import load_svm
from attnbias.workflow.svm_geometry_file import GeometrySVMs

joblog.start(snakemake)
wc, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
datasets = npz.load_data(i.data, p.data)
solutions = load_svm(i.svm, datasets, p.svm)
seeds = list(datasets)
settings = dict(device=p.device, dtype=p.dtype, threads=snakemake.threads)
# a geometry experiment (p.geometry: its norms; {} for the others): each norm's SVM
# solution, and its measures logged at every logged iteration (attnbias.training.geometry_measures)
norms = p.geometry.get("norms", [])
svms = None
if norms:
    svms = GeometrySVMs.load(
        i.geometry[0], datasets, norms, p.train["train_u"], p.geometry["identities"]
    )


def train(chosen):
    """dispatch.run_seeds on the `chosen` seeds."""
    if svms is not None:
        settings["extra_metrics"] = svms.extra_metrics(datasets, chosen, p.optimizer)
    return dispatch.run_seeds(
        [datasets[s] for s in chosen], [solutions[s] for s in chosen], p.train, p.optimizer,
        **settings,
    )  # fmt: skip


try:
    iterations, metrics, finals, info = train(seeds)
except (FloatingPointError, ValueError):
    # a batch's error names no run: train the seeds alone, and name the first that fails
    for seed in seeds:
        try:
            train([seed])
        except (FloatingPointError, ValueError) as err:
            raise type(err)(
                f"experiment {wc.experiment}, optimizer {wc.optimizer}, seed {seed}: {err}"
            ) from err
    raise
tables = []
for seed, metric in zip(seeds, metrics, strict=True):
    logging.info(
        "seed %d trained on %s (backend %s); final metrics: %s",
        seed,
        info["device"],
        info["backend"],
        {name: float(values[-1]) for name, values in metric.items()},
    )
    tables.append(parquet.metrics_table(wc.experiment, wc.optimizer, seed, iterations, metric))
# the resolved device and backend (`auto` may mean CUDA), for the figures' provenance
table = parquet.with_identity(parquet.with_run_info(pa.concat_tables(tables), info), p.identities)
parquet.save_table(o.metrics, table, by_seed=True)
finals = dict(zip(seeds, finals, strict=True))
npz.save_seeds(
    o.final, finals, {ident["seed"]: dict(ident, kind="final") for ident in p.identities}
)
