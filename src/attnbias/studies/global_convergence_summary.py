"""The global-convergence study's summary table, from its per-run table (global_convergence).

Apart from global_convergence.py, which trains with torch, so that the study's figure and tables are
drawn in the plotting env, without torch.
"""

from __future__ import annotations

import pandas as pd


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per (setting, optimizer): runs, how many reached W_mm and their fraction, median final gap.

    Where the table has them, also the number of diverged runs and the median final
    effective gap. Settings and optimizers keep the order of their first appearance.
    """
    columns = {
        "runs": ("reached", "size"),
        "reached": ("reached", "sum"),
        "median_final_gap": ("final_gap", "median"),
    }
    optional = {
        "diverged": ("diverged", "sum"),
        "median_final_effective_gap": ("final_effective_gap", "median"),
    }
    columns |= {name: agg for name, agg in optional.items() if agg[0] in table}
    out = table.groupby(["setting", "optimizer"], sort=False).agg(**columns).reset_index()
    out["reached"] = out["reached"].astype(int)
    out.insert(4, "fraction_reached", out["reached"] / out["runs"])
    return out
