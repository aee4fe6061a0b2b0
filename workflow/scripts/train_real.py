"""Train one real-data run -> results/train/{figure}/{optimizer}/seed{seed}.parquet.

Resumes from results/checkpoints/... when an earlier attempt of the same run was killed.
"""

import logging

import torch

from attnbias.optim.spec import spec_of
from attnbias.realdata.run import train_run
from attnbias.training import devices
from attnbias.workflow import joblog, parquet

joblog.start(snakemake)
torch.set_num_threads(snakemake.threads)
wc, p = snakemake.wildcards, snakemake.params
with open(snakemake.log[0], "a") as progress_file:
    steps, metrics, device = train_run(
        p.experiment,
        spec_of(p.optimizer, real=True),  # the run's optimizer, resolved once
        seed=int(wc.seed),
        data_root=p.data_root,
        device=p.device,
        autocast=p.autocast,
        checkpoint=p.checkpoint,
        # read from the config, not params: how often to checkpoint and whether to draw a
        # progress bar change no result, so changing them must not rerun training
        checkpoint_every=snakemake.config["real_data"]["checkpoint_every"],
        progress=snakemake.config["real_data"]["progress"],
        compile=snakemake.config["real_data"]["compile"],
        progress_file=progress_file,
    )
logging.info(
    "trained on %s; last log point: %s", device, {k: float(v[-1]) for k, v in metrics.items()}
)
table = parquet.metrics_table(wc.figure, wc.optimizer, int(wc.seed), steps, metrics)
# the resolved device (`auto` may become CUDA), for the figures' provenance
table = parquet.with_identity(parquet.with_run_info(table, devices.device_info(device)), p.identity)
parquet.save_table(snakemake.output.metrics, table)
