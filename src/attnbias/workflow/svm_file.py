"""Reading an svm file: the store's checks (attnbias.workflow.npz), then the W-SVM's own
(attnbias.svm.check). Apart from io, so that the jobs that never read an svm file (data)
do not depend on the SVM's code; the svm-geometry file's reader (svm_geometry_file) apart
from this one, so that the readers of an svm file (claims) do not depend on cvxpy's."""

from __future__ import annotations

import numpy as np

from attnbias.svm.check import w_mm_defect
from attnbias.workflow.npz import load_seeds
from attnbias.workflow.store import FileContractError, rebuild_hint


def check_seeds(path, solutions: dict, data: dict, defects) -> None:
    """The file holds the data file's seeds, and `defects(arrays, data)` finds nothing
    wrong with any seed's solutions (else FileContractError naming the path and seed)."""
    if list(solutions) != list(data):
        raise FileContractError(
            f"{path} holds seeds {list(solutions)}, its data file seeds {list(data)}; "
            f"{rebuild_hint(path)}"
        )
    for seed, arrays in solutions.items():
        found = defects(arrays, data[seed])
        if found:
            raise FileContractError(
                f"{path}: seed {seed}: {'; '.join(found)}; {rebuild_hint(path)}"
            )


def _w_mm_defects(arrays: dict, data: dict) -> list[str]:
    defect = w_mm_defect(arrays["W_mm"], data, float(arrays.get("W_mm_kkt_residual", np.nan)))
    return [defect] if defect else []


def load_svm(path, data: dict[int, dict], expect: list[dict] | None = None) -> dict[int, dict]:
    """{seed: W_mm, ...} of an svm file, checked against its identities and each seed
    against its data (attnbias.svm.check: W_mm is the max-margin solution of that seed's
    data). `data`: load_data's {seed: arrays}, the same seeds."""
    solutions = load_seeds(path, ("W_mm",), expect)
    check_seeds(path, solutions, data, _w_mm_defects)
    return solutions
