"""Draw results/{experiment}.pdf (and its PNG twin) from the aggregate table, with the
figure's provenance in both files and in results/{experiment}.provenance.json."""

from attnbias import figures, io, joblog, provenance

joblog.start(snakemake)
title = snakemake.params.title or snakemake.wildcards.experiment
record = provenance.of_job(snakemake, figure=snakemake.wildcards.experiment, title=title)
figures.draw(
    snakemake.params.kind,
    io.load_metrics(snakemake.input.metrics, snakemake.params.identity),
    title=title,
    legend=snakemake.params.legend,
    outputs=[snakemake.output.pdf, snakemake.output.png],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
