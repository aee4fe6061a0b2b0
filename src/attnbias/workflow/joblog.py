"""A job's log file holds its error: the traceback of whatever stops a job script.

Snakemake says "check log file(s)" when a job fails, but a traceback only reaches the
console; `start(snakemake)`, first thing in every script of workflow/scripts, sends the
script's logging to its job's log file and writes any uncaught exception there as well
(and, as before, to stderr).
"""

from __future__ import annotations

import logging
import os
import sys
import traceback

# What Snakemake sets to a job's threads (snakemake.shell), so that BLAS never starts a
# thread per core inside a job given fewer; the log says what the job saw.
BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def start(job) -> None:
    """Log to the job's log file (where the rule has one) and record an uncaught error."""
    if not job.log:
        return
    logging.basicConfig(filename=job.log[0], level=logging.INFO, format="%(message)s")
    blas = ", ".join(f"{name}={os.environ.get(name, 'unset')}" for name in BLAS_THREADS)
    logging.info("threads: %s (%s)", job.threads, blas)
    previous = sys.excepthook

    def record(kind, value, tb):
        text = "".join(traceback.format_exception(kind, value, tb))
        logging.getLogger().error("job failed:\n%s", text.rstrip())
        logging.shutdown()  # flushed before the process ends
        previous(kind, value, tb)

    sys.excepthook = record
