"""Draw results/{experiment}.pdf (and its PNG twin) from the aggregate table, with the
figure's provenance in both files and in results/{experiment}.provenance.json, and its
caption (the hypotheses the data and svm jobs measured among it) in
results/{experiment}.caption.md."""

import logging

from attnbias.data import hypotheses
from attnbias.figures import algorithm_style, drawing, notes
from attnbias.optim.spec import resolve
from attnbias.workflow import joblog, npz, parquet, provenance

joblog.start(snakemake)
i, p = snakemake.input, snakemake.params
title = p.title or snakemake.wildcards.experiment
# where the runs trained: the merged record the aggregate carries
record = provenance.of_job(
    snakemake, figure=snakemake.wildcards.experiment, title=title, training=[i.metrics]
)
tokens = None
if drawing.layout_of(p.kind).needs_tokens:  # a tokens panel: seed 0's tokens and W_mm
    tokens = {**npz.load_data(i.data)[0], "W_mm": npz.load_seeds(i.svm)[0]["W_mm"]}
# as the data and svm jobs measured and stored them: no array is read for the caption
note = hypotheses.describe(hypotheses.summarize(npz.hypotheses_by_seed(i.data, i.svm)))
logging.info("%s", note)
# each optimizer drawn as its algorithm is, in every figure (algorithm_style)
optimizers = p.config["experiments"][snakemake.wildcards.experiment]["optimizers"]
table = parquet.load_metrics(i.metrics, p.identity)
# the step caps (App. C's): their rule and where each bound, over every step
labels = {name: label for name, (label, _) in p.legend.items()}
note = " ".join(n for n in (notes.caps_note(table, optimizers, labels), note) if n)
drawing.draw(
    p.kind,
    table,
    title=title,
    legend=p.legend,
    algorithms=algorithm_style.algorithms_of(resolve(optimizers, real=False), p.kind),
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
    note=note,
    tokens=tokens,
    description=p.description,
)
provenance.save(snakemake.output.provenance, record)
