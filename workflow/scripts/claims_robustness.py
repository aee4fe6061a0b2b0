"""The claims' robustness to the constants the paper lost and we chose: each constant's
points (claims_robustness_points) compared with our value's rows
(attnbias.claims.robustness) -> results/claims_robustness.{parquet,csv,md}; the claims job
reads the Parquet file."""

import pandas as pd
import pyarrow as pa

from attnbias.claims import robustness
from attnbias.workflow import io, joblog, parquet

joblog.start(snakemake)
p = snakemake.params
tables = []
for name, described in p.constants.items():
    points = parquet.load_frame(snakemake.input[name], p.identities[name])
    constant = robustness.Constant.from_params(name, described)
    tables.append(robustness.compare(constant, points))
table = pd.concat(tables, ignore_index=True)
arrow = pa.Table.from_pandas(table, preserve_index=False)
parquet.save_table(snakemake.output.table, parquet.with_identity(arrow, p.identity))
io.save_csv(snakemake.output.csv, table)
io.save_text(snakemake.output.md, robustness.to_markdown(table, p.constants))
