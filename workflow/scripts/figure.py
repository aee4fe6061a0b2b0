"""Draw results/{experiment}.pdf (and its PNG twin) from the aggregate table."""

from attnbias import figures, io

figures.draw(
    snakemake.params.kind,
    io.load_metrics(snakemake.input.metrics),
    title=snakemake.params.title or snakemake.wildcards.experiment,
    legend=snakemake.params.legend,
    outputs=[snakemake.output.pdf, snakemake.output.png],
)
