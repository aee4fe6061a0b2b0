"""The SVMs' cost estimate (attnbias.svm.cost), read from the measured table."""

from __future__ import annotations

import pytest

from attnbias.svm import cost

DM = {
    "data": {"model": "dm", "params": {"n": 20, "T": 5, "d": 100}},
    "seeds": 5,
    "norms": list(cost.TABLE_NORMS),
}


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


def test_a_long_svm_job_is_announced_and_a_short_one_is_not():
    """The d = 4096 experiment of the issue: its estimate said before the job starts."""
    small = {**DM, "seeds": 1, "data": {"model": "dm", "params": {"n": 4, "T": 3, "d": 12}}}
    assert cost.experiment_seconds(small) < cost.ANNOUNCE_SECONDS
    assert cost.announcement("small", small) is None
    big = {**DM, "data": {"model": "dm", "params": {"n": 20, "T": 5, "d": 4096}}}
    line = cost.announcement("big", big)
    assert line.startswith("svm_geometry of experiment big: about ")
    assert "at d = 4096, n (T - 1) = 80 constraints" in line
    minutes = float(line.split("about ")[1].split(" min")[0])
    assert minutes == pytest.approx(cost.experiment_seconds(big) / 60, abs=0.5)


def test_the_documented_limit_keeps_a_seed_within_minutes():
    """The limit on d of an experiment with norms: the five norms of config/config.yaml's
    geometry experiments in at most 5 CPU-minutes a seed, by the measured table."""
    assert cost.seed_seconds(list(cost.TABLE_NORMS), cost.MAX_NORMS_D) <= 5 * 60
    assert cost.seed_seconds(list(cost.TABLE_NORMS), 4096) > 60 * 60  # the old limit: hours
