"""Draw results/{experiment}.pdf (and its PNG twin) from the aggregate table, with the
figure's provenance in both files and in results/{experiment}.provenance.json."""

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
datasets = [io.load_data(p) for p in snakemake.input.data]
reports = [
    hypotheses.report(d, io.load_svm(p, d))
    for d, p in zip(datasets, snakemake.input.svm, strict=True)
]
drawing.draw(
    snakemake.params.kind,
    io.load_metrics(snakemake.input.metrics, snakemake.params.identity),
    title=title,
    legend=snakemake.params.legend,
    outputs=[snakemake.output.pdf, snakemake.output.png],
    provenance=record,
    note=hypotheses.describe(hypotheses.summarize(reports)),
    geometry=geometry,
)
provenance.save(snakemake.output.provenance, record)
