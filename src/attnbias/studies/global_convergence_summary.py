"""The global-convergence study's summary table, from its per-run table (global_convergence).

Apart from global_convergence.py, which trains with torch, so that the study's figure and tables are
drawn in the plotting env, without torch.
"""

from __future__ import annotations

import pandas as pd

from attnbias.claims.global_convergence import OUTCOMES


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per (setting, optimizer): runs, how many reached W_mm and their fraction, median final gap.

    Where the table has them, also how many runs ended in each outcome (column `outcome`,
    studies.global_outcomes: reached, undecided, left_float64, failed; one column each,
    named by the outcome) and the median final effective gap. Settings and optimizers keep
    the order of their first appearance.
    """
    columns = {
        "runs": ("reached", "size"),
        "reached": ("reached", "sum"),
        "median_final_gap": ("final_gap", "median"),
    }
    if "final_effective_gap" in table:
        columns["median_final_effective_gap"] = ("final_effective_gap", "median")
    keys = ["setting", "optimizer"]
    out = table.groupby(keys, sort=False).agg(**columns).reset_index()
    out["reached"] = out["reached"].astype(int)
    out.insert(4, "fraction_reached", out["reached"] / out["runs"])
    if "outcome" in table:
        counts = pd.crosstab([table["setting"], table["optimizer"]], table["outcome"])
        counts = counts.reindex(columns=[o for o in OUTCOMES if o != "reached"], fill_value=0)
        out = out.join(counts.astype(int), on=keys)
    return out
