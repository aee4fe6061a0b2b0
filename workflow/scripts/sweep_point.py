"""One point of a sweep: its data, SVMs and every optimizer x seed (attnbias.studies.sweep_runs)."""

import pyarrow as pa

from attnbias.studies import sweep_runs
from attnbias.workflow import joblog, parquet

joblog.start(snakemake)
wc, p = snakemake.wildcards, snakemake.params
runs, curves, record = sweep_runs.run_point(
    p.experiment,
    p.metrics,
    label=f"sweep {wc.sweep}, point {wc.point}",
    device=p.device,
    dtype=p.dtype,
    threads=snakemake.threads,
)
for name, table in (("runs", runs), ("curves", curves)):
    table.insert(0, "point", wc.point)
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    arrow = parquet.with_identity(parquet.with_run_info(arrow, record), p.identity)
    parquet.save_table(getattr(snakemake.output, name), arrow)
