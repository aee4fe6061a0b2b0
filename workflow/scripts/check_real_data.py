"""Check that a real-data figure's datasets and weights exist -> results/real/{figure}/source.json.

Runs before any training job of the figure, so missing data stops the build at once with
one message that lists every missing dataset and weights, each with its config key and
where to put it; the message goes to the console and the job's log, without a traceback.
"""

import json
import logging
import sys

from attnbias import io, joblog
from attnbias.realdata import sources
from attnbias.realdata.errors import MissingDataError

joblog.start(snakemake)
try:
    report = sources.check(
        snakemake.params.needs,
        snakemake.params.data_root,
        download=snakemake.params.download,
        what=f"figure {snakemake.wildcards.figure}",
    )
except MissingDataError as err:  # expected, and explained in full: no traceback
    logging.error("%s", err)
    logging.shutdown()
    sys.exit(str(err))
logging.info("found: %s", report)
io.save_text(snakemake.output[0], json.dumps(report, indent=2, allow_nan=False) + "\n")
