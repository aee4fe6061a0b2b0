"""Draw a real-data figure, results/{figure}.pdf (and PNG), from its aggregate table, with
its provenance in both files and in results/{figure}.provenance.json, and its caption
in results/{figure}.caption.md."""

from attnbias.figures import algorithm_style
from attnbias.optim.spec import resolve
from attnbias.realdata import cap_bound, plots
from attnbias.workflow import io, joblog, parquet, provenance

joblog.start(snakemake)
source = io.load_json(snakemake.input.source)
title = plots.stamped(snakemake.params.title, source["fixture"])
# where the runs trained: the merged record the aggregate carries
record = provenance.of_job(
    snakemake, figure=snakemake.wildcards.figure, title=title, training=[snakemake.input.metrics]
)
section = snakemake.params.config["real_data"]["experiments"][snakemake.wildcards.figure]
optimizers = section["optimizers"]
table = parquet.load_metrics(snakemake.input.metrics, snakemake.params.identity)
# a run whose cap bound at most of its steps is labelled as the SGD it became
legend = plots.run_legend(snakemake.params.legend, optimizers, table)
plots.draw_training(
    table,
    title=snakemake.params.title,
    legend=legend,
    # each optimizer drawn as its algorithm is in every figure (None: a stochastic rule)
    algorithms=algorithm_style.algorithms_of(resolve(optimizers, real=True), None),
    caption=plots.training_caption(
        snakemake.params.settings,
        legend,
        source,
        cap_bound.caption_text(optimizers, table),
        tuning=snakemake.params.tuning,
    ),
    fixture=source["fixture"],
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
    dataset=plots.face_line(snakemake.params.settings, source),
)
provenance.save(snakemake.output.provenance, record)
