"""Real-data runs whose cap bound at every step: reported as the method they became.

SNGD's cap `max_step` and SPS's `eta_max` turn the step into plain SGD's with the cap for
its learning rate wherever they bind (attnbias.optim.cap_count). The trainer logs the share
of the steps between two log points at which the cap bound (CAP_METRIC). A run whose share
is 1 at every log point on every seed was that SGD throughout: `bound_throughout` is the one
reading of that, and the figure's legend, its caption and the claims rows (through
`relabel`, and claims.real for the verdict) all take it from here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CAP_METRIC = "cap_bound_share"  # the trainer's metric (attnbias.realdata.trainer.fit)


def bound_throughout(table: pd.DataFrame, optimizer: str) -> bool:
    """Whether `optimizer`'s cap bound at every step of its runs: CAP_METRIC is 1 at every
    log point after step 0 on every seed of the long run table (optimizer, seed, iteration,
    metric, value). False where the table has no such metric for it (no cap logged)."""
    if "metric" not in table or "optimizer" not in table:
        return False
    mine = table[(table["optimizer"] == optimizer) & (table["metric"] == CAP_METRIC)]
    shares = mine["value"].to_numpy(dtype=float)
    logged = shares[~np.isnan(shares)]  # step 0 has none: no step before it
    if not logged.size:
        return False
    per_seed = mine.assign(value=shares).groupby("seed", observed=True)["value"].count()
    return bool((per_seed > 0).all() and np.all(logged == 1.0))


def became(settings: dict) -> str | None:
    """The plain method a run with `settings` (the config entry: rule and its settings) is
    where its cap binds at every step, in words; None for a rule without a cap."""
    rule = settings.get("rule")
    if rule == "sps" and settings.get("eta_max") is not None:
        return f"SGD with lr {settings['eta_max']:g}"
    if rule == "sngd" and settings.get("max_step") is not None:
        momentum = settings.get("momentum", 0.0)
        with_momentum = f", momentum {momentum:g}" if momentum else ""
        return f"SGD with lr {settings['max_step']:g}{with_momentum}"
    return None


def became_runs(optimizers: dict, table: pd.DataFrame) -> dict[str, str]:
    """optimizer -> the method it became, for each run of `optimizers` (name -> settings)
    whose cap bound at every step on every seed of `table`."""
    out = {}
    for name, settings in optimizers.items():
        plain = became(settings)
        if plain is not None and bound_throughout(table, name):
            out[name] = plain
    return out


def label(name: str, plain: str) -> str:
    """The label of a run that became `plain`: "SPS (cap bound at every step: SGD with lr
    0.1)"."""
    return f"{name} (cap bound at every step: {plain})"


def relabel(labels: dict | None, optimizers: dict, table: pd.DataFrame) -> dict | None:
    """`labels` (optimizer -> label; the name where missing) with each run that became
    plain SGD named so; `labels` itself where none did."""
    found = became_runs(optimizers, table)
    if not found:
        return labels
    labels = dict(labels or {})
    for name, plain in found.items():
        labels[name] = label(labels.get(name, name), plain)
    return labels
