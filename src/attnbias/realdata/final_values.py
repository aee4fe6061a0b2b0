"""A real-data figure's end point per optimizer, and the best setting of each update rule.

For a learning-rate sweep (several optimizers of one rule, e.g. SGD at three rates) this is
the record of the choice: `best_of_rule` marks, for each rule, the optimizer with the lowest
final train loss (mean over seeds of the last logging window's mean mini-batch loss), the
quantity the figures compare. Ties go to the first by name.
"""

from __future__ import annotations

import pandas as pd

from attnbias.optim.spec import StochasticSpec

COLUMNS = [
    "optimizer", "label", "rule", "settings", "seeds", "final_iteration",
    "final_train_loss", "final_test_accuracy", "best_of_rule",
]  # fmt: skip


def final_values(table: pd.DataFrame, optimizers: dict[str, dict]) -> pd.DataFrame:
    """One row per optimizer of `optimizers` (name -> config entry: label, rule, settings),
    in that order, from the aggregate table of a real-data figure."""
    missing = set(optimizers) - set(table["optimizer"])
    if missing:
        raise ValueError(f"the metrics table has no rows for optimizer(s) {sorted(missing)}")
    rows = []
    for name, entry in optimizers.items():
        runs = table[table["optimizer"] == name]
        last = runs.loc[runs.groupby(["seed", "metric"])["iteration"].idxmax()]
        final = last.groupby("metric")["value"].mean()
        spec = StochasticSpec.from_config(entry)
        rows.append(
            {
                "optimizer": name,
                "label": entry.get("label", name),
                "rule": spec.rule,
                "settings": spec.settings_text(),
                "seeds": runs["seed"].nunique(),
                "final_iteration": int(last["iteration"].max()),
                "final_train_loss": float(final["train_loss"]),
                "final_test_accuracy": float(final["test_accuracy"]),
            }
        )
    out = pd.DataFrame(rows)
    best = out.groupby("rule", sort=False)["final_train_loss"].idxmin()
    out["best_of_rule"] = out.index.isin(best.to_numpy())
    return out[COLUMNS]
