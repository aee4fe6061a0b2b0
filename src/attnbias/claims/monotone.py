"""A quantity that never decreases (Lem. 3; Lem. 11 (ii)): its largest relative drop
between logged iterations, within rounding, on every seed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.claims.measure import MONOTONE_TOLERANCE, largest_decrease
from attnbias.claims.rows import Measured, Rows, Said, Verdict, spread


def no_decrease_row(rows: Rows, said: Said, values: pd.DataFrame, what: str, window: str,
                    opt: str) -> None:  # fmt: skip
    """A row of "`what` never decreases" on `opt`'s run: `values` (a column per seed) over
    `window` (in words), its largest relative drop between logged iterations within
    rounding (MONOTONE_TOLERANCE) on every seed."""
    drops = largest_decrease(values)
    measured = Measured(
        f"largest relative decrease of the {what} between logged iterations",
        window,
        drops,
        opt=opt,
        value_text="no decrease on any seed"
        if not drops.any()
        else f"largest relative decrease {spread(drops)} over the seeds",
    )
    verdict = Verdict(
        f"holds if <= {MONOTONE_TOLERANCE:g} (rounding) on every seed",
        np.all(drops <= MONOTONE_TOLERANCE),
    )
    rows.add(said, measured, verdict)
