"""Draw results/{experiment}.pdf (and its PNG twin) from the aggregate table, with the
figure's provenance in both files and in results/{experiment}.provenance.json, and its
caption (the hypotheses the data and svm jobs measured among it) in
results/{experiment}.caption.md."""

import logging

from attnbias.data import hypotheses
from attnbias.figures import drawing
from attnbias.workflow import io, joblog, provenance

joblog.start(snakemake)
title = snakemake.params.title or snakemake.wildcards.experiment
record = provenance.of_job(snakemake, figure=snakemake.wildcards.experiment, title=title)
geometry = None
if "geometry_svm" in snakemake.input.keys():  # bad_init_2d: seed 0's tokens and W_mm
    geometry = {
        **io.load_data(snakemake.input.data[0]),
        "W_mm": io.load_npz(snakemake.input.geometry_svm)["W_mm"],
    }
# as the data and svm jobs measured and stored them: no array is read for the caption
reports = [
    io.seed_hypotheses(d, s) for d, s in zip(snakemake.input.data, snakemake.input.svm, strict=True)
]
note = hypotheses.describe(hypotheses.summarize(reports))
logging.info("%s", note)
drawing.draw(
    snakemake.params.kind,
    io.load_metrics(snakemake.input.metrics, snakemake.params.identity),
    title=title,
    legend=snakemake.params.legend,
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
    note=note,
    geometry=geometry,
    description=snakemake.params.description,
)
provenance.save(snakemake.output.provenance, record)
