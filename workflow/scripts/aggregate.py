"""All optimizers and seeds of an experiment -> results/{experiment}/metrics.parquet, with
the merged record of where its runs trained."""

from attnbias.workflow import io, joblog

joblog.start(snakemake)
runs = snakemake.input.runs
table = io.concat_tables(runs, [snakemake.params.runs[path] for path in runs])
io.save_table(snakemake.output[0], io.with_identity(table, snakemake.params.identity))
