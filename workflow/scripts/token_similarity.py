"""Within-text cosine similarities of BERT token embeddings for one dataset (Fig. 10)
-> results/{figure}/similarity/{dataset}.parquet (a histogram with its summary)."""

import logging

import torch

from attnbias.realdata import similarity_data
from attnbias.training.devices import resolve_device
from attnbias.workflow import joblog, parquet

joblog.start(snakemake)
torch.set_num_threads(snakemake.threads)
settings = snakemake.params.settings
histogram = similarity_data.dataset_histogram(
    snakemake.wildcards.dataset,
    settings,
    data_root=snakemake.params.data_root,
    device=resolve_device(snakemake.params.device),
)
logging.info("%s", {k: v for k, v in vars(histogram).items() if k not in ("edges", "counts")})
parquet.save_frame(
    snakemake.output[0], similarity_data.histogram_frame(histogram, settings["band"])
)
