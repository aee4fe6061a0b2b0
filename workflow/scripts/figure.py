"""Draw results/{experiment}.pdf (and its PNG twin) from the aggregate table, with the
figure's provenance in both files and in results/{experiment}.provenance.json."""

from attnbias import figures, io, provenance

title = snakemake.params.title or snakemake.wildcards.experiment
record = provenance.of_job(snakemake, figure=snakemake.wildcards.experiment, title=title)
geometry = None
if "data" in snakemake.input.keys():  # bad_init_2d: seed 0's tokens and W_mm for its left panel
    geometry = {
        **io.load_data(snakemake.input.data),
        "W_mm": io.load_npz(snakemake.input.svm)["W_mm"],
    }
figures.draw(
    snakemake.params.kind,
    io.load_metrics(snakemake.input.metrics),
    title=title,
    legend=snakemake.params.legend,
    outputs=[snakemake.output.pdf, snakemake.output.png],
    provenance=record,
    geometry=geometry,
)
provenance.save(snakemake.output.provenance, record)
