"""Draw results/{figure}.pdf (and PNG) of a token-similarity figure (fig10 and its variants)
from the per-dataset similarity histograms, with its provenance in both files and in
results/{figure}.provenance.json, and its caption in results/{figure}.caption.md."""

from pathlib import Path

from attnbias.realdata import plots
from attnbias.workflow import io, joblog, parquet, provenance

joblog.start(snakemake)
source = io.load_json(snakemake.input.source)
title = plots.stamped(snakemake.params.title, source["fixture"])
record = provenance.of_job(snakemake, figure=snakemake.wildcards.figure, title=title)
plots.draw_similarity(
    {Path(p).stem: parquet.load_frame(p) for p in snakemake.input["values"]},
    title=snakemake.params.title,
    fixture=source["fixture"],
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
    model=Path(source["model"]["path"]).name,
)
provenance.save(snakemake.output.provenance, record)
