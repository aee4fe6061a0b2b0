"""The study's tables and its figure, from the per-(setting, optimizer) runs; the figure's
provenance goes into its files and into results/global_convergence.provenance.json."""

import pandas as pd

from attnbias.claims import global_convergence, write
from attnbias.figures import algorithm_style, study_figure
from attnbias.optim.spec import resolve
from attnbias.studies import global_convergence_summary
from attnbias.workflow import io, joblog, parquet, provenance

joblog.start(snakemake)
expect = snakemake.params.identities  # input file -> the identity it must hold


def read(paths):
    return pd.concat(
        [parquet.read_table(p, expect[p]).to_pandas() for p in paths], ignore_index=True
    )


runs = read(snakemake.input.runs)
assumptions = read(snakemake.input.assumptions)
assumptions = assumptions.drop_duplicates("setting", ignore_index=True)  # one per setting
summary = global_convergence_summary.summary(runs)
io.save_csv(snakemake.output.runs, runs)
io.save_csv(snakemake.output.summary, summary)
io.save_csv(snakemake.output.assumptions, assumptions)
specs = resolve(snakemake.params.settings["optimizers"], real=False)  # once, from the config
# the study's rows of the claims table (global convergence), in the claims' format
study_rows = global_convergence.study_claims(runs, assumptions, snakemake.params.settings, specs)
io.save_csv(snakemake.output.claims_csv, write.to_csv(study_rows))
io.save_text(snakemake.output.claims_md, write.to_markdown(study_rows))
record = provenance.of_job(snakemake, figure="global_convergence", title=study_figure.TITLE)
study_figure.draw(
    runs,
    summary,
    legend=snakemake.params.legend,
    # each optimizer in its algorithm's colour, as in every figure; the study trains W of
    # Example 1 with u fixed
    algorithms=algorithm_style.algorithms_of(specs, "fixed_decoder"),
    settings=snakemake.params.settings,
    outcome_words=global_convergence.OUTCOME_WORDS,
    outputs=[snakemake.output.pdf, snakemake.output.png, snakemake.output.caption],
    provenance=record,
)
provenance.save(snakemake.output.provenance, record)
