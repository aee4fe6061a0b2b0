"""Real-data run tables with a capped SGD-like run, for the tests of
attnbias.realdata.cap_bound and of the real-data figure's legend and caption."""

from __future__ import annotations

import numpy as np
import pandas as pd

OPTIMIZERS = {
    "sgd": {"label": "SGD", "rule": "sgd", "lr": 0.1},
    "sngd": {"label": "SNGD", "rule": "sngd", "lr": 0.1, "max_step": 100.0},
    "sps": {"label": "SPS", "rule": "sps", "c": 0.5, "eta_max": 0.1},
}


STEPS = np.arange(0, 80, 16)


def run_table(sps_share: float, sngd_share: float = 0.0) -> pd.DataFrame:
    """Two seeds of three optimizers; SPS's cap_bound_share `sps_share` at every log point
    after step 0 but the last of seed 1, which is 0.5 where sps_share is not 1."""
    rows = []
    for opt in OPTIMIZERS:
        for seed in (0, 1):
            for step in STEPS:
                rows.append((opt, seed, step, "train_loss", 2.0 - 0.01 * step))
                rows.append((opt, seed, step, "test_accuracy", 0.5 + 0.001 * step))
                if opt == "sgd":
                    continue
                share = sps_share if opt == "sps" else sngd_share
                if opt == "sps" and sps_share != 1 and seed == 1 and step == STEPS[-1]:
                    share = 0.5
                rows.append((opt, seed, step, "cap_bound_share", np.nan if step == 0 else share))
    return pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])
