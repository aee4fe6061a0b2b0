"""Check that a real-data figure's datasets and weights exist -> results/real/{figure}/source.json.

Runs before any training job of the figure, so missing data stops the build at once with a
message that names the dataset, the config key and how to get the data.
"""

import json
import logging

from attnbias import io, joblog
from attnbias.realdata import sources

joblog.start(snakemake)
try:
    report = sources.check(
        snakemake.params.needs, snakemake.params.data_root, download=snakemake.params.download
    )
except FileNotFoundError as err:
    logging.error("%s", err)
    raise
logging.info("found: %s", report)
io.save_text(snakemake.output[0], json.dumps(report, indent=2, allow_nan=False) + "\n")
