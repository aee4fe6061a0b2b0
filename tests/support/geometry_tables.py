"""Hand-made geometry tables (layout `geometry`) for the tests of the claims beyond the
paper: each norm's alignment and margin ratio per logged t, two seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd

NORMS = ("fro", "max", "spectral", "nuclear", "l3")
OPTIMIZERS = {
    "sign": {"rule": "sign", "lr": 0.01, "schedule": "sqrt"},
    "kq": {"rule": "kq", "lr": 1.0, "init_scale": 0.1},
}


TIMES = (0, 10, 100, 1000)


def geometry_table(final: dict, margin: dict, seeds=(0, 1), face=1.0, lead=None) -> pd.DataFrame:
    """align_<norm> rising to `final[opt][norm]` at t = 1000, and margin_ratio_<norm> (for
    every norm) rising to `margin[opt]`, or `margin[opt]` itself where it is a path (one
    value per t of TIMES); seed 1 a little below seed 0. face_cos_<norm>: `face` (1: every
    SVM unique); `lead` {opt: (norm, extra)}: that norm's margin ratio `extra` higher."""
    lead = lead or {}
    rows = []
    for opt in final:
        path = np.broadcast_to(margin[opt], len(TIMES)) * np.array(TIMES) / TIMES[-1]
        if np.ndim(margin[opt]):
            path = np.asarray(margin[opt], dtype=float)
        for seed in seeds:
            for t, m in zip(TIMES, path, strict=True):
                for norm in NORMS:
                    align = t / TIMES[-1] * final[opt][norm] - 0.001 * seed
                    extra = lead[opt][1] if lead.get(opt, (None,))[0] == norm else 0.0
                    rows.append((opt, seed, t, f"align_{norm}", align))
                    rows.append((opt, seed, t, f"margin_ratio_{norm}", m + extra - 0.001 * seed))
                    rows.append((opt, seed, t, f"face_cos_{norm}", face))
    frame = pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])
    frame.insert(0, "experiment", "geo")
    return frame
