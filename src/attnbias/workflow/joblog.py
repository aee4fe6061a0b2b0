"""A job's log file holds its error: the traceback of whatever stops a job script.

Snakemake says "check log file(s)" when a job fails, but a traceback only reaches the
console; `start(snakemake)`, first thing in every script of workflow/scripts, sends the
script's logging to its job's log file and writes any uncaught exception there as well
(and, as before, to stderr).
"""

from __future__ import annotations

import logging
import sys
import traceback


def start(job) -> None:
    """Log to the job's log file (where the rule has one) and record an uncaught error."""
    if not job.log:
        return
    logging.basicConfig(filename=job.log[0], level=logging.INFO, format="%(message)s")
    previous = sys.excepthook

    def record(kind, value, tb):
        text = "".join(traceback.format_exception(kind, value, tb))
        logging.getLogger().error("job failed:\n%s", text.rstrip())
        logging.shutdown()  # flushed before the process ends
        previous(kind, value, tb)

    sys.excepthook = record
