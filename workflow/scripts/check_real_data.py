"""Check that a real-data figure's datasets and weights exist -> results/real/{figure}/source.json.

Runs before any training job of the figure. The workflow's onstart has already listed
every missing item of the whole run in one message (sources.check_build); this job records
where the figure's inputs are, and stops with the figure's own list where onstart could not
look (`--sdm conda`), on the console and in the job's log, without a traceback.
"""

import logging
import sys

from attnbias.data.missing import MissingDataError
from attnbias.realdata import sources
from attnbias.workflow import io, joblog

joblog.start(snakemake)
try:
    report = sources.check(
        snakemake.params.needs,
        snakemake.params.data_root,
        download=snakemake.params.download,
        fetch=snakemake.params.fetch,
        what=f"figure {snakemake.wildcards.figure}",
    )
except MissingDataError as err:  # expected, and explained in full: no traceback
    logging.error("%s", err)
    logging.shutdown()
    sys.exit(str(err))
logging.info("found: %s", report)
io.save_json(snakemake.output[0], report)
