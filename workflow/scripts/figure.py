"""Draw results/{experiment}.pdf (and its PNG twin) from the aggregate table, with the
figure's provenance in both files and in results/{experiment}.provenance.json."""

from attnbias import figures, hypotheses, io, provenance

title = snakemake.params.title or snakemake.wildcards.experiment
record = provenance.of_job(snakemake, figure=snakemake.wildcards.experiment, title=title)
figures.draw(
    snakemake.params.kind,
    io.load_metrics(snakemake.input.metrics),
    title=title,
    legend=snakemake.params.legend,
    outputs=[snakemake.output.pdf, snakemake.output.png],
    provenance=record,
    note=hypotheses.describe(
        hypotheses.summarize([hypotheses.report(io.load_data(p)) for p in snakemake.input.data])
    ),
)
provenance.save(snakemake.output.provenance, record)
