"""One (setting, optimizer) of the global-convergence study: every initialisation at once."""

import torch

from attnbias import io, study

torch.set_num_threads(snakemake.threads)
p = snakemake.params
runs, assumptions = study.study_table(
    [{"name": snakemake.wildcards.setting, **p.setting}],
    {snakemake.wildcards.optimizer: p.optimizer},
    inits=p.inits,
    scales=p.scales,
    iterations=p.iterations,
    threshold=p.threshold,
    seed=p.seed,
    log_points=p.log_points,
    device=p.device,
)
io.save_frame(snakemake.output.runs, runs)
io.save_frame(snakemake.output.assumptions, assumptions)
