"""Draw results/fig10.pdf (and PNG) from the per-dataset similarity histograms, with its
provenance in both files and in results/fig10.provenance.json."""

import json
from pathlib import Path

import pandas as pd

from attnbias import provenance
from attnbias.realdata import plots

source = json.loads(Path(snakemake.input.source).read_text())
record = provenance.collect(
    figure="fig10",
    title=plots.stamped(snakemake.params.title, source["fixture"]),
    config=snakemake.params.config,
    source_dir=snakemake.scriptdir,
    benchmark_files=snakemake.input.benchmarks,
    run_files=[],
)
plots.draw_similarity(
    {Path(p).stem: pd.read_parquet(p) for p in snakemake.input["values"]},
    title=snakemake.params.title,
    fixture=source["fixture"],
    outputs=[snakemake.output.pdf, snakemake.output.png],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
