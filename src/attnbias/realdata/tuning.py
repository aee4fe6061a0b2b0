"""The one rule by which a learning-rate sweep (a real-data experiment with `sweep_of`)
chooses its figure's settings, for every optimizer alike (config real_data.tuning.rule).

probe_area: per update rule (sgd, sngd, sps, adam), the setting with the lowest area under
the probe-loss curve (the loss on the fixed probe subset of the training set, logged at the
log points: attnbias.realdata.trainer), divided by the run's length, on the sweep's seed,
which is the figure's tuning_seed and is never reported. A capped setting (SNGD's max_step,
SPS's eta_max) whose cap bound at more than cap_bound.MAX_CAP_SHARE of its steps was mostly
SGD, not its method (the cap rule): never chosen. A sweep in which every setting of a capped
rule broke the cap rule cannot meet it and is refused, naming the config key to widen.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.realdata import cap_bound
from attnbias.realdata.metric_names import PROBE_METRIC
from attnbias.workflow import tuning_record

RULES = {
    "probe_area": (
        "per update rule, the setting with the lowest mean probe loss over the run (the "
        "area under the loss curve on a fixed subset of the training set, divided by the "
        "run's length), among those whose cap bound at no more than "
        f"{cap_bound.MAX_CAP_SHARE:.0%} of the steps"
    ),
}


def probe_area(table: pd.DataFrame, optimizer: str) -> pd.Series:
    """Per seed (the index), the area under `optimizer`'s probe-loss curve (trapezoids over
    its log points, step 0 included) divided by the run's length; empty where no probe
    loss is logged."""
    return curve_area(table, optimizer, PROBE_METRIC)


def curve_area(table: pd.DataFrame, optimizer: str, metric: str) -> pd.Series:
    """Per seed (the index), the area under `optimizer`'s `metric` curve (trapezoids over
    the iterations where it is logged) divided by the span of those iterations."""
    mine = table[(table["optimizer"] == optimizer) & (table["metric"] == metric)]
    out = {}
    for seed, run in mine.sort_values("iteration").groupby("seed", observed=True):
        t = run["iteration"].to_numpy(dtype=float)
        v = run["value"].to_numpy(dtype=float)
        if len(t) > 1:
            out[seed] = float(np.sum((v[1:] + v[:-1]) / 2 * np.diff(t)) / (t[-1] - t[0]))
    return pd.Series(out, dtype=float)


def choose(
    table: pd.DataFrame, optimizers: dict[str, dict], rule: str = "probe_area",
    sweep: str | None = None,
) -> pd.DataFrame:  # fmt: skip
    """One row per optimizer of `optimizers` (name -> config entry with its `rule`): its
    mean probe_area over seeds, its cap_bound_share (NaN: no cap), `eligible` (the cap rule
    met) and `chosen` (`rule`'s choice among its update rule's eligible settings). For a
    sweep (its name `sweep`), a rule with several settings and no probe loss, or none that
    meets the cap rule, is refused naming the config key."""
    if rule not in RULES:
        raise ValueError(f"real_data.tuning.rule is {rule!r}, not one of {sorted(RULES)}")
    rows = []
    for name, entry in optimizers.items():
        share = cap_bound.bound_share(table, name)
        rows.append({
            "optimizer": name, "rule": entry["rule"],
            "probe_area": float(probe_area(table, name).mean()),
            "cap_bound_share": np.nan if share is None else share,
            "eligible": share is None or share <= cap_bound.MAX_CAP_SHARE,
        })  # fmt: skip
    out = pd.DataFrame(rows)
    out["chosen"] = False
    for update_rule, group in out.groupby("rule", sort=False):
        key = f"real_data.experiments.{sweep}.optimizers" if sweep else "the optimizers"
        if sweep and len(group) > 1 and group["probe_area"].isna().any():
            raise ValueError(
                f"{key}: the tuning rule {rule} reads the probe loss, which runs of "
                f"{update_rule} did not log (train.probe_samples)"
            )
        eligible = group[group["eligible"]]
        if eligible.empty:
            if sweep:
                raise ValueError(
                    f"{key}: every setting of {update_rule} ({', '.join(group['optimizer'])}) "
                    f"had its cap bind at more than {cap_bound.MAX_CAP_SHARE:.0%} of its "
                    "steps (the cap rule, attnbias.realdata.cap_bound.MAX_CAP_SHARE): add a "
                    "larger cap to the grid"
                )
            continue
        best = eligible["probe_area"].idxmin() if eligible["probe_area"].notna().any() else None
        out.loc[best if best is not None else eligible.index[0], "chosen"] = True
    return out


def caption(tuning: dict) -> str:
    """workflow.tuning_record.words as a figure caption's sentence (with a space before
    it), and where checked the tuning rule in words; "" for {}."""
    if not tuning:
        return ""
    said = tuning_record.words(tuning)
    said = said[0].upper() + said[1:]
    if tuning["state"] != tuning_record.CHECKED:
        return f" {said}."
    rule = tuning["rule"]
    return f" {said}; seed {tuning['seed']} is never reported; {rule}: {RULES[rule]}."
