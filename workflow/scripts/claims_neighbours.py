"""The neighbours' statements as claims (results/claims_neighbours.{md,csv}; docs/claims.md):
read from the neighbours' tables (attnbias.claims.neighbours)."""

import pandas as pd

from attnbias.claims import neighbours, neighbours_write, write
from attnbias.workflow import io, joblog

joblog.start(snakemake)
tables = {name: pd.read_csv(path) for name, path in snakemake.input.items() if name != "code"}
table = neighbours.measure(tables)
io.save_text(snakemake.output.md, neighbours_write.to_markdown(table))
io.save_csv(snakemake.output.csv, write.to_csv(table))
