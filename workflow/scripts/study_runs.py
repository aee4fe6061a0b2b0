"""One (setting, optimizer) of the global-convergence study: every initialisation at once."""

import pyarrow as pa

from attnbias.optim.spec import resolve
from attnbias.studies import global_convergence
from attnbias.workflow import joblog, parquet

joblog.start(snakemake)
p = snakemake.params
runs, assumptions, record = global_convergence.study_table(
    [{"name": snakemake.wildcards.setting, **p.setting}],
    resolve({snakemake.wildcards.optimizer: p.optimizer}, real=False),
    **p.study,  # inits, scales, iterations, threshold, seed, log_points
    device=p.device,
    threads=snakemake.threads,
)
table = pa.Table.from_pandas(runs, preserve_index=False)
parquet.save_table(
    snakemake.output.runs, parquet.with_identity(parquet.with_run_info(table, record), p.identity)
)
assumptions = pa.Table.from_pandas(assumptions, preserve_index=False)
parquet.save_table(
    snakemake.output.assumptions, parquet.with_identity(assumptions, p.assumptions_identity)
)
