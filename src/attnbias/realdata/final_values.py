"""A real-data figure's end point per optimizer, and the best setting of each update rule.

For a learning-rate sweep (several optimizers of one rule, e.g. SGD at three rates) this is
the record of the choice: `best_of_rule` marks, for each rule, the setting that the tuning
rule (config real_data.tuning.rule; attnbias.realdata.tuning) chooses, with the quantities
it reads: `probe_area` (mean over seeds of the area under the probe-loss curve over the
run's length) and `cap_bound_share` (the share of the steps at which a cap bound; a setting
above cap_bound.MAX_CAP_SHARE is never chosen). The final train loss and test accuracy are
shown beside them, read by no rule.
"""

from __future__ import annotations

import pandas as pd

from attnbias.optim.spec import resolve
from attnbias.realdata import tuning
from attnbias.workflow.tuning_record import COLUMNS  # the record's columns


def final_values(
    table: pd.DataFrame, optimizers: dict[str, dict], rule: str = "probe_area",
    sweep: str | None = None,
) -> pd.DataFrame:  # fmt: skip
    """One row per optimizer of `optimizers` (name -> config entry: label, rule, settings),
    in that order, from the aggregate table of a real-data figure; `rule`: the tuning rule,
    `sweep`: the experiment's name where it is a sweep (tuning.choose refuses a sweep that
    cannot meet the rule)."""
    missing = set(optimizers) - set(table["optimizer"])
    if missing:
        raise ValueError(f"the metrics table has no rows for optimizer(s) {sorted(missing)}")
    rows = []
    for name, spec in resolve(optimizers, real=True).items():  # once, from the config
        runs = table[table["optimizer"] == name]
        last = runs.loc[runs.groupby(["seed", "metric"])["iteration"].idxmax()]
        final = last.groupby("metric")["value"].mean()
        rows.append(
            {
                "optimizer": name,
                "label": optimizers[name].get("label", name),
                "rule": spec.rule,
                "settings": spec.settings_text(),
                "seeds": runs["seed"].nunique(),
                "final_iteration": int(last["iteration"].max()),
                "final_train_loss": float(final["train_loss"]),
                "final_test_accuracy": float(final["test_accuracy"]),
            }
        )
    out = pd.DataFrame(rows)
    chosen = tuning.choose(table, optimizers, rule, sweep)
    out["probe_area"] = chosen["probe_area"].to_numpy()
    out["cap_bound_share"] = chosen["cap_bound_share"].to_numpy()
    out["best_of_rule"] = chosen["chosen"].to_numpy()
    return out[COLUMNS]
