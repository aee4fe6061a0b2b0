"""One point of a sweep: its data, SVMs and every optimizer x seed (attnbias.studies.sweep_runs)."""

import pyarrow as pa

from attnbias.studies import sweep_runs
from attnbias.workflow import io, job, joblog

snakemake = job.load()  # the job, as the workflow hands it over (attnbias.workflow.job)
joblog.start(snakemake)
wc, p = snakemake.wildcards, snakemake.params
if sweep_runs.kernel.backend(p.device, p.dtype) == "torch":
    import torch

    torch.set_num_threads(snakemake.threads)
runs, curves = sweep_runs.run_point(
    p.experiment,
    p.metrics,
    label=f"sweep {wc.sweep}, point {wc.point}",
    device=p.device,
    dtype=p.dtype,
)
# where the runs trained (run_point picks the backend the same way), for the provenance
info = sweep_runs.backend_info(p.device, p.dtype)
for name, table in (("runs", runs), ("curves", curves)):
    table.insert(0, "point", wc.point)
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    io.save_table(getattr(snakemake.output, name), io.with_run_info(arrow, info))
