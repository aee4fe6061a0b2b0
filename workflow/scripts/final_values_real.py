"""Each optimizer's end point of a real-data figure -> results/{figure}_final.csv
(attnbias.realdata.final_values: which setting of each rule the tuning rule chooses)."""

from attnbias.realdata.final_values import final_values
from attnbias.workflow import io, joblog, parquet

joblog.start(snakemake)
table = parquet.load_metrics(snakemake.input.metrics, snakemake.params.identity)
io.save_text(
    snakemake.output[0],
    final_values(
        table, snakemake.params.optimizers, snakemake.params.tuning_rule, snakemake.params.sweep
    ).to_csv(index=False, float_format="%.6g"),
)
