"""All optimizers and seeds of an experiment -> results/{experiment}/metrics.parquet."""

from attnbias import io

io.save_table(snakemake.output[0], io.concat_tables(snakemake.input.runs))
