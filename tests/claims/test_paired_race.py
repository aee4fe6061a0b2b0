"""The real data's paired race (attnbias.claims.paired_race): a one-sided paired t-test over
seeds on the difference of the loss curves' areas; undecided only where the data cannot
decide, saying how many seeds would; runs that are not pairs are refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from claims_tables import REAL_COLUMNS

from attnbias.claims import layouts, paired_race

OPTS = {"sgd": {"rule": "sgd", "lr": 0.1}, "sngd": {"rule": "sngd", "lr": 0.5}}
STEPS = range(0, 81, 16)


def table(gaps, metric="probe_loss", first=None) -> pd.DataFrame:
    """Five seeds (1 to 5): SGD's loss 1 - t/160 plus seed noise; SNGD's the same plus
    gaps[seed] at every t > 0 (its area then differs by gaps[seed] * 64/80 per seed)."""
    rows = []
    for i, gap in enumerate(gaps):
        seed = i + 1
        for opt in OPTS:
            for t in STEPS:
                base = 1 - t / 160 + 0.01 * seed
                rows.append(("r", opt, seed, t, metric, base + (gap if opt == "sngd" and t else 0)))
            start = 2.0 if first is None or opt == "sgd" else first
            rows.append(("r", opt, seed, 0, "batch_loss", start))
    return pd.DataFrame(rows, columns=REAL_COLUMNS)


def row(t: pd.DataFrame) -> pd.Series:
    experiment = {"layout": "real", "dataset": "mnli", "optimizers": OPTS, "seeds": 5,
                  "labels": {"sgd": "SGD", "sngd": "SNGD"}}  # fmt: skip
    out = layouts.claims({"r": experiment}, {"r": t}).set_index("key")
    return out.loc["r sngd faster than sgd"]


def test_a_gap_on_every_seed_decides_the_race_either_way():
    ahead = row(table([-0.05, -0.04, -0.06, -0.05, -0.03]))
    assert ahead["outcome"] == "holds" and "paired t-test" in ahead["verdict"]
    assert "probe loss" in ahead["value_text"] and "t = " in ahead["value_text"]
    behind = row(table([0.05, 0.04, 0.06, 0.05, 0.03]))  # the control
    assert behind["outcome"] == "does not hold"
    assert row(table([0.0] * 5))["outcome"] == "does not hold"  # the same run: not ahead


def test_a_gap_within_the_noise_is_undecided_and_says_what_would_decide_it():
    noisy = row(table([-0.05, 0.04, -0.03, 0.02, -0.02]))
    assert noisy["outcome"] == "undecided"
    assert (
        "the data cannot decide it" in noisy["verdict"] and "seeds would decide" in noisy["verdict"]
    )
    d = np.array([-0.05, 0.04, -0.03, 0.02, -0.02]) * 64 / 80
    more = paired_race.seeds_to_decide(d)
    assert more > 5 and f"about {more} seeds" in noisy["verdict"]
    # at that many seeds, a sample with this mean and spread is decided; one fewer is not
    t_at = lambda n: np.mean(d) / (np.std(d, ddof=1) / np.sqrt(n))  # noqa: E731
    from scipy import stats

    assert stats.t.cdf(t_at(more), more - 1) < paired_race.ALPHA
    assert stats.t.cdf(t_at(more - 1), more - 2) >= paired_race.ALPHA


def test_the_race_reads_the_probe_loss_where_logged_else_the_train_loss():
    assert paired_race.race_metric(table([0.0] * 5)) == "probe_loss"
    train = table([-0.05, -0.04, -0.06, -0.05, -0.03], metric="train_loss")
    assert paired_race.race_metric(train) == "train_loss"
    assert "train loss" in row(train)["value_text"]


def test_runs_that_are_not_pairs_are_refused():
    with pytest.raises(ValueError, match="different first batches"):
        row(table([-0.05] * 5, first=2.5))
    other_seeds = table([-0.05] * 5)
    other_seeds.loc[other_seeds["optimizer"] == "sngd", "seed"] += 10
    with pytest.raises(ValueError, match="ran other seeds"):
        row(other_seeds)
