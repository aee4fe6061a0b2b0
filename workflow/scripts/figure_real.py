"""Draw a real-data figure, results/{figure}.pdf (and PNG), from its aggregate table."""

import json
from pathlib import Path

from attnbias import io
from attnbias.realdata import plots

source = json.loads(Path(snakemake.input.source).read_text())
plots.draw_training(
    io.load_metrics(snakemake.input.metrics),
    title=snakemake.params.title,
    legend=snakemake.params.legend,
    caption=plots.training_caption(snakemake.params.settings, snakemake.params.legend, source),
    fixture=source["fixture"],
    outputs=[snakemake.output.pdf, snakemake.output.png],
)
