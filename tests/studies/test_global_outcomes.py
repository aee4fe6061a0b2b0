"""How a run of the global-convergence study ends (attnbias.studies.global_outcomes): each
outcome, and for each a one-change control that makes it read each of the others."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.studies import global_outcomes
from attnbias.training.metrics import log_grid

GRID = log_grid(3000, 100)


def _gap(power: float) -> np.ndarray:
    """0.9 (ln t / ln 2)^-power on the grid (0.9 for t < 2): its late slope against
    ln ln t is exactly -power. power 2 ends at 6.7e-3 (t = 3000)."""
    t = np.maximum(GRID.astype(float), 2.0)
    return 0.9 * (np.log(t) / np.log(2.0)) ** -power


def _rising_at_the_end(gap: np.ndarray) -> np.ndarray:
    out = gap.copy()
    out[-1] = 1.01 * out[-2]
    return out


def _left_range(gap: np.ndarray) -> np.ndarray:
    return np.full_like(gap, np.nan)  # the trainer gives such a run NaN everywhere


def _flat_at_the_end(gap: np.ndarray) -> np.ndarray:
    """The same curve, levelled off over its last decade (a plateau)."""
    return np.where(GRID >= GRID[-1] / 10, gap[GRID >= GRID[-1] / 10][0], gap)


# one base curve (falling like (ln t)^-2, faster than 1/ln t) and one change each
CASES = {
    "reached": (_gap(2.0), 1e-2),
    "undecided": (_gap(2.0), 1e-3),
    "slower": (_gap(0.5), 1e-3),  # slope -0.5 > -1: still falls, more slowly than 1/ln t
    "left_float64": (_left_range(_gap(2.0)), 1e-3),
    "failed": (_rising_at_the_end(_gap(2.0)), 1e-3),
}
# every outcome reached from every other case by one change
CONTROLS = {
    ("reached", "undecided"): (_gap(2.0), 1e-3),  # a lower threshold
    ("reached", "slower"): (_gap(0.5), 1e-3),
    ("reached", "left_float64"): (_left_range(_gap(2.0)), 1e-2),  # overflow after reaching
    ("reached", "failed"): (_flat_at_the_end(_gap(2.0)), 1e-3),  # levelled off short of it
    ("undecided", "reached"): (_gap(2.0), 1e-2),
    ("undecided", "slower"): (_gap(0.99), 1e-3),  # just slower than 1/ln t
    ("undecided", "left_float64"): (_left_range(_gap(2.0)), 1e-3),
    ("undecided", "failed"): (_rising_at_the_end(_gap(2.0)), 1e-3),
    ("slower", "reached"): (_gap(0.5), 0.5),
    ("slower", "undecided"): (_gap(1.0), 1e-3),  # exactly 1/ln t still counts
    ("slower", "left_float64"): (_left_range(_gap(0.5)), 1e-3),
    ("slower", "failed"): (_rising_at_the_end(_gap(0.5)), 1e-3),
    ("left_float64", "reached"): (_gap(2.0), 1e-2),
    ("left_float64", "undecided"): (_gap(2.0), 1e-3),
    ("left_float64", "slower"): (_gap(0.5), 1e-3),
    ("left_float64", "failed"): (np.full_like(GRID, 0.2, dtype=float), 1e-3),  # flat
    ("failed", "reached"): (_rising_at_the_end(_gap(2.0)), 1e-2),  # reached before the rise
    ("failed", "undecided"): (_gap(2.0), 1e-3),
    ("failed", "slower"): (_gap(0.5), 1e-3),
    ("failed", "left_float64"): (_left_range(_rising_at_the_end(_gap(2.0))), 1e-3),
}


def _one(gap: np.ndarray, threshold: float) -> str:
    outcome, _ = global_outcomes.classify(GRID, gap[None], threshold)
    return outcome[0]


@pytest.mark.parametrize("outcome", list(CASES))
def test_each_outcome(outcome):
    assert _one(*CASES[outcome]) == outcome


@pytest.mark.parametrize("pair", list(CONTROLS))
def test_a_control_for_each_other_outcome(pair):
    _, other = pair
    assert _one(*CONTROLS[pair]) == other


def test_batch_classifies_each_run_alone():
    names = ["undecided", "slower", "left_float64", "failed"]
    outcome, slopes = global_outcomes.classify(GRID, np.stack([CASES[o][0] for o in names]), 1e-3)
    assert outcome.tolist() == names
    np.testing.assert_allclose(slopes[[0, 1, 3]], [-2.0, -0.5, -2.0], atol=0.05)
    assert np.isnan(slopes[2])


def test_every_outcome_is_a_claims_outcome():
    assert set(CASES) == set(global_outcomes.OUTCOMES)


@pytest.mark.parametrize("power", [0.5, 1.0, 3.0])
def test_late_slope_is_the_power_of_ln_t(power):
    (slope,) = global_outcomes.late_slopes(GRID, _gap(power)[None])
    assert slope == pytest.approx(-power, rel=1e-9)


def test_late_slope_reads_the_last_decade_only():
    gap = _gap(2.0)
    early = GRID < GRID[-1] / 10
    bent = np.where(early, 0.5, gap)  # flat before the last decade
    np.testing.assert_allclose(global_outcomes.late_slopes(GRID, bent[None]), [-2.0], rtol=1e-9)


def test_too_short_a_grid_is_refused_naming_the_keys():
    with pytest.raises(ValueError, match="global_convergence.iterations or log_points"):
        global_outcomes.late_slopes(np.array([0, 1, 2, 3]), np.ones((1, 4)))
