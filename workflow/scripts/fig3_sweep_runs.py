"""One data point of the fig3 sweep: every optimizer and step size, seeds batched."""

import logging

import pyarrow as pa

from attnbias import fast, io, sweep_runs

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
p = snakemake.params
if fast.backend(p.device, p.dtype) == "torch":
    import torch

    torch.set_num_threads(snakemake.threads)
runs = sweep_runs.run_point(
    snakemake.wildcards.sweep_point,
    p.point,
    p.optimizers,
    p.lrs,
    seeds=p.seeds,
    iterations=p.iterations,
    log_points=p.log_points,
    loss=p.loss,
    device=p.device,
    dtype=p.dtype,
)
logging.info("%s", runs.to_string())
# where the runs trained (run_point picks the backend the same way), for the provenance
info = sweep_runs.backend_info(p.device, p.dtype)
table = pa.Table.from_pandas(runs, preserve_index=False)
io.save_table(snakemake.output[0], io.with_run_info(table, info))
