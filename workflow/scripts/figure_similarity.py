"""Draw results/fig10.pdf (and PNG) from the per-dataset similarity histograms."""

import json
from pathlib import Path

import pandas as pd

from attnbias.realdata import plots

histograms = {Path(p).stem: pd.read_parquet(p) for p in snakemake.input["values"]}
plots.draw_similarity(
    histograms,
    title=snakemake.params.title or snakemake.wildcards.get("figure", "fig10"),
    fixture=json.loads(Path(snakemake.input.source).read_text())["fixture"],
    outputs=[snakemake.output.pdf, snakemake.output.png],
)
