"""Train every seed of one (experiment, optimizer) -> one metrics table of every seed
(results/train/{experiment}/{optimizer}.parquet) and their final parameters (.final.npz).

attnbias.training.dispatch picks the backend: float64 on `auto` or `cpu` trains with the
compiled kernel, without importing torch; `cuda[:N]` and float32 with torch. The seeds train
in one batch (workflow.train_job): the job's start, not their arithmetic, is its cost; a
run that fails is named by experiment, optimizer and seed.
"""

import logging

import pyarrow as pa

from attnbias.optim.spec import spec_of
from attnbias.workflow import joblog, npz, parquet
from attnbias.workflow.svm_file import load_svm
from attnbias.workflow.svm_geometry_file import GeometrySVMs
from attnbias.workflow.train_job import train_seeds

joblog.start(snakemake)
wc, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
datasets = npz.load_data(i.data, p.data)
solutions = load_svm(i.svm, datasets, p.svm)
seeds = list(datasets)
spec = spec_of(p.optimizer, real=False)  # the job's optimizer, resolved once
settings = dict(device=p.device, dtype=p.dtype, threads=snakemake.threads)
# a geometry experiment (p.geometry: its norms; {} for the others): each norm's SVM
# solution, and its measures logged at every logged iteration (attnbias.training.geometry_measures)
norms = p.geometry.get("norms", [])
if norms:
    svms = GeometrySVMs.load(
        i.geometry[0], datasets, norms, p.train["train_u"], p.geometry["identities"],
        p.geometry["tokens"],
    )  # fmt: skip
    settings["extra_metrics"] = svms.extra_metrics(datasets, seeds, spec)
labels = [f"experiment {wc.experiment}, optimizer {wc.optimizer}, seed {s}" for s in seeds]
iterations, metrics, finals, info = train_seeds(
    [datasets[s] for s in seeds], [solutions[s] for s in seeds], p.train, spec,
    labels=labels, **settings,
)  # fmt: skip
if norms:  # the other token sets' SVMs: solved here, or another job's (svm.token_set_cache)
    logging.info(svms.cache.summary())
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
