"""What the svm and svm_geometry jobs share: read the experiment's data file, solve each
seed's SVMs, log what was solved, and write one file with a seed axis (the store's
identities and checksums, attnbias.workflow.npz)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from attnbias.workflow import npz


def solve_every_seed(
    job, solve: Callable[[dict, str], tuple[dict, list[str]]]
) -> tuple[dict[int, dict], dict[int, dict]]:
    """({seed: solve's solutions}, {seed: dataset}) for every seed of the job's data file
    (input `data`, its identities the param `data`). `solve(dataset, name)` returns the
    solutions and the lines that describe them; `name` ("experiment fig2, seed 3") is what
    an error names."""
    datasets = npz.load_data(job.input.data, job.params.data)
    solutions = {}
    for seed, dataset in datasets.items():
        name = f"experiment {job.wildcards.experiment}, seed {seed}"
        solutions[seed], lines = solve(dataset, name)
        for line in lines:
            logging.info("seed %d: %s", seed, line)
    return solutions, datasets


def save(job, arrays: dict[int, dict], reports: dict[int, dict] | None = None) -> None:
    """Write every seed's arrays with its identity (the param `identities`)."""
    identities = {ident["seed"]: ident for ident in job.params.identities}
    npz.save_seeds(job.output[0], arrays, identities, reports)
