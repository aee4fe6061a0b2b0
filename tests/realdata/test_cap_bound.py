"""A real-data run whose cap bound at every step on every seed (attnbias.realdata.cap_bound)
is drawn and captioned as the SGD it became; a run whose cap bound at only some steps keeps
its own name.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.realdata import cap_bound

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


def test_bound_throughout_needs_every_log_point_of_every_seed():
    assert cap_bound.bound_throughout(run_table(1.0), "sps")
    assert not cap_bound.bound_throughout(run_table(0.9), "sps")
    assert not cap_bound.bound_throughout(run_table(1.0), "sngd")  # share 0
    assert not cap_bound.bound_throughout(run_table(1.0), "sgd")  # no cap logged
    one_seed = run_table(1.0)
    seed_1 = (one_seed["seed"] == 1) & (one_seed["metric"] == "cap_bound_share")
    one_seed.loc[seed_1, "value"] = np.nan  # seed 1 logged no share: not read as bound
    assert not cap_bound.bound_throughout(one_seed, "sps")


@pytest.mark.parametrize(
    "settings, plain",
    [
        (OPTIMIZERS["sps"], "SGD with lr 0.1"),
        (OPTIMIZERS["sngd"], "SGD with lr 100"),
        (
            {"rule": "sngd", "lr": 1.0, "max_step": 0.5, "momentum": 0.9},
            "SGD with lr 0.5, momentum 0.9",
        ),
        (OPTIMIZERS["sgd"], None),
        ({"rule": "sngd", "lr": 1.0}, None),
    ],
)
def test_what_a_capped_run_becomes(settings, plain):
    assert cap_bound.became(settings) == plain
