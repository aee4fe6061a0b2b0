"""The sweep figure (attnbias.studies.sweep_figure)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.studies import (
    sweep_figure,
    sweep_grid,
)


def test_a_null_grid_value_keeps_its_name_in_the_figure():
    """A table holds the grid's null (uncapped) as NaN; the figure finds its point by name."""
    column = pd.Series([1.0e4, np.nan, [0, 1]], dtype=object)
    assert list(sweep_figure._formatted(column)) == [
        sweep_grid.format_value(1.0e4),
        sweep_grid.format_value(None),
        sweep_grid.format_value([0, 1]),
    ]
    assert sweep_grid.format_value(None) != sweep_grid.format_value(float("nan"))
