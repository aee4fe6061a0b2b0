"""The SVMs' cost estimate (attnbias.svm.cost), read from the measured table."""

from __future__ import annotations

import pytest

from attnbias.svm import cost


def test_the_table_is_a_measurement_to_re_fit():
    """Every norm the estimate reads, at the same two or more sizes."""
    assert set(cost.PER_SEED) == set(cost.TABLE_NORMS)
    sizes = {tuple(sorted(table)) for table in cost.PER_SEED.values()}
    assert len(sizes) == 1 and len(sizes.pop()) >= 2


@pytest.mark.parametrize("norm", cost.TABLE_NORMS)
def test_the_estimate_is_the_table_at_measured_sizes_and_grows_with_d(norm):
    table = cost._table(norm)
    for d, seconds in table.items():
        assert cost.norm_seconds(norm, d) == pytest.approx(seconds)
    largest = max(table)
    grid = [10, *sorted(table), 2 * largest, 4 * largest]
    estimates = [cost.norm_seconds(norm, d) for d in grid]
    assert estimates == sorted(estimates)
    # past the table at least in proportion to d
    assert cost.norm_seconds(norm, 2 * largest) >= 2 * table[largest] * (1 - 1e-12)


def test_other_lp_norms_read_l3_and_the_cost_grows_with_m():
    assert cost.norm_seconds("l1.5", 150) == cost.norm_seconds("l3", 150)
    assert cost.norm_seconds("max", 100, m=160) == pytest.approx(2 * cost.norm_seconds("max", 100))


def _limit(per_seed: dict) -> int:
    """The rule: the largest measured d whose seed takes at most LIMIT_SECONDS in the five
    norms (by the table: measured, never extrapolated)."""
    norms = list(cost.TABLE_NORMS)
    within = [d for d in per_seed["max"] if cost.seed_seconds(norms, d) <= cost.LIMIT_SECONDS]
    return max(within)


def test_the_documented_limit_is_the_largest_measured_d_within_minutes_a_seed(monkeypatch):
    """The limit on d of an experiment with norms: the five norms of config/config.yaml's
    geometry experiments in at most 5 CPU-minutes a seed (the old limit's seed took 3.0),
    at a measured d; every measured d larger takes longer (none is measured past it now:
    moving it needs a measurement). The control: a table whose seed at the limit took
    longer moves the rule's limit down to the next measured d."""
    norms = list(cost.TABLE_NORMS)
    assert cost.MAX_NORMS_D == _limit(cost.PER_SEED)
    assert cost.seed_seconds(norms, cost.MAX_NORMS_D) <= cost.LIMIT_SECONDS == 5 * 60
    slower = {n: dict(t) for n, t in cost.PER_SEED.items()}
    slower["max"][cost.MAX_NORMS_D] = cost.LIMIT_SECONDS + 1
    monkeypatch.setattr(cost, "PER_SEED", slower)
    measured = sorted(slower["max"])
    assert _limit(slower) == measured[measured.index(cost.MAX_NORMS_D) - 1]
    assert cost.seed_seconds(norms, 4096) > 5 * 60  # the old limit of every other experiment
