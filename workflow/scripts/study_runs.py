"""One (setting, optimizer) of the global-convergence study: every initialisation at once."""

import pyarrow as pa

from attnbias.studies import global_convergence
from attnbias.workflow import io, joblog

joblog.start(snakemake)
p = snakemake.params
runs, assumptions, record = global_convergence.study_table(
    [{"name": snakemake.wildcards.setting, **p.setting}],
    {snakemake.wildcards.optimizer: p.optimizer},
    **p.study,  # inits, scales, iterations, threshold, seed, log_points
    device=p.device,
    threads=snakemake.threads,
)
table = pa.Table.from_pandas(runs, preserve_index=False)
io.save_table(snakemake.output.runs, io.with_identity(io.with_run_info(table, record), p.identity))
assumptions = pa.Table.from_pandas(assumptions, preserve_index=False)
io.save_table(snakemake.output.assumptions, io.with_identity(assumptions, p.assumptions_identity))
