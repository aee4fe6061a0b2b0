"""The logging grid of a run (attnbias.training.metrics.log_grid): the iterations a run logs."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.training import metrics


@pytest.mark.parametrize(
    ("iterations", "points"), [(0, 5), (1, 5), (10, 50), (1000, 20), (10**5, 40), (7, 1)]
)
@pytest.mark.parametrize("spacing", ["log", "linear"])
def test_log_grid(iterations, points, spacing):
    grid = metrics.log_grid(iterations, points, spacing)
    assert grid[0] == 0 and grid[-1] == iterations
    assert np.issubdtype(grid.dtype, np.integer)
    assert np.all(np.diff(grid) > 0)  # sorted and unique
    assert np.all((grid >= 0) & (grid <= iterations))
    assert len(grid) <= points + 2


def test_log_grid_is_log_spaced():
    grid = metrics.log_grid(10**4, 5)
    np.testing.assert_array_equal(grid, [0, 1, 10, 100, 1000, 10000])
    np.testing.assert_array_equal(metrics.log_grid(100, 5, "linear"), [0, 25, 50, 75, 100])


def test_log_grid_bad_spacing():
    with pytest.raises(ValueError, match="cubic"):
        metrics.log_grid(10, 3, "cubic")
