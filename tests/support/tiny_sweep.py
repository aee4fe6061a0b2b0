"""config/tiny.yaml with a tiny sweep of fig3: the sweep tests (tests/studies/) and the SLURM
tests (tests/project/test_slurm.py) build on it."""

from __future__ import annotations

import copy

import yaml
from project import REPO

# fig3's sweep, tiny: 2 d x 2 lr points. Not in config/tiny.yaml, whose experiments other
# tests replace (a sweep of a base they remove would be refused).
TINY_SWEEP = {
    "base": "fig3",
    "seeds": 2,
    "grid": {
        "train.iterations": [200],
        "data.params.d": [12, 16],
        "zip": {"optimizers.ngd.lr": [0.1, 0.3], "optimizers.joint-ngd.lr": [0.1, 0.3]},
    },
    "metrics": ["final_log10_gap_W", "final_log_loss"],
    "claims": {
        "gd_slowest_W": {"claim": "slowest", "optimizer": "gd", "metric": "final_log10_gap_W"},
        "ngd_ahead_W": {
            "claim": "ahead",
            "a": "ngd",
            "b": "joint-ngd",
            "metric": "final_log10_gap_W",
        },
    },
}


def tiny() -> dict:
    """config/tiny.yaml with the tiny sweep `fig3`."""
    config = yaml.safe_load((REPO / "config/tiny.yaml").read_text())
    config["sweeps"] = {"fig3": copy.deepcopy(TINY_SWEEP)}
    return config
