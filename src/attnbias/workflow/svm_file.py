"""Reading an svm file: the store's checks (attnbias.workflow.npz), then the W-SVM's own
(attnbias.svm.check). Apart from io, so that the jobs that never read an svm file (data)
do not depend on the SVM's code."""

from __future__ import annotations

import numpy as np

from attnbias.svm.check import w_mm_defect
from attnbias.workflow.npz import load_seeds
from attnbias.workflow.store import FileContractError, rebuild_hint


def load_svm(path, data: dict[int, dict], expect: list[dict] | None = None) -> dict[int, dict]:
    """{seed: W_mm, ...} of an svm file, checked against its identities and each seed
    against its data (attnbias.svm.check: W_mm is the max-margin solution of that seed's
    data). `data`: load_data's {seed: arrays}, the same seeds."""
    solutions = load_seeds(path, ("W_mm",), expect)
    if list(solutions) != list(data):
        raise FileContractError(
            f"{path} holds seeds {list(solutions)}, its data file seeds {list(data)}; "
            f"{rebuild_hint(path)}"
        )
    for seed, arrays in solutions.items():
        kkt = float(arrays.get("W_mm_kkt_residual", np.nan))
        defect = w_mm_defect(arrays["W_mm"], data[seed], kkt)
        if defect:
            raise FileContractError(f"{path}: seed {seed}: {defect}; {rebuild_hint(path)}")
    return solutions
