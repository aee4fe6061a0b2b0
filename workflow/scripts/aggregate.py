"""All optimizers and seeds of an experiment -> results/{experiment}/metrics.parquet, with
the merged record of where its runs trained."""

from attnbias.workflow import joblog, parquet

joblog.start(snakemake)
runs = snakemake.input.runs
table = parquet.concat_tables(runs, [snakemake.params.runs[path] for path in runs])
parquet.save_table(snakemake.output[0], parquet.with_identity(table, snakemake.params.identity))
