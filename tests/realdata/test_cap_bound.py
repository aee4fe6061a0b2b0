"""A real-data run whose cap bound at most of its steps (attnbias.realdata.cap_bound: more
than MAX_CAP_SHARE) is drawn and captioned as the SGD it became; a run whose cap bound at
fewer steps keeps its own name; either way the caption and the claims say at how many.
"""

from __future__ import annotations

import numpy as np
import pytest
from capped_runs import OPTIMIZERS, run_table

from attnbias.realdata import cap_bound


def test_bound_mostly_is_more_than_the_cap_rules_share_of_the_steps():
    assert cap_bound.MAX_CAP_SHARE == 0.5
    assert cap_bound.bound_mostly(run_table(1.0), "sps")
    assert cap_bound.bound_mostly(run_table(0.9), "sps")  # 239 of 240 was SGD too
    assert cap_bound.bound_mostly(run_table(9 / 16), "sps")
    assert not cap_bound.bound_mostly(run_table(8 / 16), "sps")  # half: the method still
    assert not cap_bound.bound_mostly(run_table(1.0), "sngd")  # share 0
    assert not cap_bound.bound_mostly(run_table(1.0), "sgd")  # no cap logged
    one_seed = run_table(1.0)
    seed_1 = (one_seed["seed"] == 1) & (one_seed["metric"] == "cap_bound_share")
    one_seed.loc[seed_1, "value"] = np.nan  # seed 1 logged no share: seed 0's steps only
    assert cap_bound.bound_share(one_seed, "sps") == 1.0
    no_share = one_seed[~(one_seed["metric"] == "cap_bound_share")]
    assert cap_bound.bound_share(no_share, "sps") is None


@pytest.mark.parametrize(
    "settings, plain",
    [
        (OPTIMIZERS["sps"], "SGD with lr 0.1"),
        (OPTIMIZERS["sngd"], "SGD with lr 100"),
        (
            {"rule": "sngd", "lr": 1.0, "max_step": 0.5, "momentum": 0.9},
            "SGD with lr 0.5, momentum 0.9",
        ),
        (OPTIMIZERS["sgd"], None),
        ({"rule": "sngd", "lr": 1.0}, None),
    ],
)
def test_what_a_capped_run_becomes(settings, plain):
    assert cap_bound.became(settings) == plain


def test_bound_steps_weigh_each_share_by_its_window():
    """Windows of 16 steps: seed 0's share 15/16 at 4 log points is 60 of 64 steps; seed 1's
    last window at 1/2 gives 45 + 8. A last window shorter than the others counts its own
    steps; a run without a cap has no count."""
    table = run_table(15 / 16)
    counts = cap_bound.bound_steps(table, "sps")
    assert counts.to_dict("index") == {0: {"bound": 60, "steps": 64}, 1: {"bound": 53, "steps": 64}}
    assert cap_bound.bound_text(table, "sps") == (
        "cap bound at 113 of 128 steps (seeds 0, 1: 60, 53 of 64)"
    )
    assert cap_bound.bound_text(table, "sgd") is None and cap_bound.bound_steps(table, "sgd").empty
    short = table[table["iteration"] <= 48].copy()
    short.loc[short["iteration"] == 48, "iteration"] = 40  # a last window of 8 steps
    assert cap_bound.bound_steps(short, "sps")["steps"].tolist() == [40, 40]


def test_the_caption_says_at_how_many_steps_each_cap_bound():
    table = run_table(15 / 16, sngd_share=0.0)
    caps = cap_bound.caption_text(OPTIMIZERS, table)
    assert caps == (
        "SNGD's cap bound at 0 of 128 steps (seeds 0, 1: 0, 0 of 64): a bound step is SGD "
        "with lr 100's. SPS's cap bound at 113 of 128 steps (seeds 0, 1: 60, 53 of 64): a "
        "bound step is SGD with lr 0.1's."
    )
    assert cap_bound.caption_text({"sgd": OPTIMIZERS["sgd"]}, table) == ""
