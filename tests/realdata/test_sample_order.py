"""Bucketed sample order (attnbias.realdata.sample_order):
batches of alike lengths, resumed exactly.
"""

from __future__ import annotations

import torch
from tiny_runs import (
    SCHEDULE,
    assert_same_run,
    bert_data,
    resume_against_uninterrupted,
)

from attnbias.realdata import sample_order

# ---------------------------------------------------------------- length-bucketed batches


def _mnli_like_lengths(n: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(5)
    return (36 * torch.exp(0.4 * torch.randn(n, generator=gen))).long().clamp(8, 128)


def test_bucketed_order_uses_the_epoch_samples_in_batches_of_alike_lengths():
    lengths, batch = _mnli_like_lengths(1000), 32  # 31 batches, 8 samples dropped
    plain = sample_order.epoch_order(3, 1, 1000)
    bucketed = sample_order.bucketed_order(3, 1, lengths, batch, pool=8)
    used = 1000 // batch * batch
    assert sorted(bucketed.tolist()) == list(range(1000))
    assert set(bucketed[:used].tolist()) == set(plain[:used].tolist())  # same samples used
    assert torch.equal(bucketed[used:], plain[used:])  # and the same ones dropped
    assert torch.equal(bucketed, sample_order.bucketed_order(3, 1, lengths, batch, pool=8))
    assert not torch.equal(bucketed, sample_order.bucketed_order(3, 2, lengths, batch, pool=8))

    def mean_padded(order):  # columns per batch under dynamic padding
        return float(lengths[order[:used]].view(-1, batch).max(dim=1).values.double().mean())

    assert mean_padded(bucketed) < 0.8 * mean_padded(plain)
    # the batches' order is shuffled: lengths do not just rise through each pool
    firsts = lengths[bucketed[:used:batch]].tolist()
    assert firsts != sorted(firsts)


def test_bucketed_runs_resume_exactly(monkeypatch, tmp_path):
    monkeypatch.setitem(SCHEDULE, "length_buckets", 2)
    reference, again, resumed = resume_against_uninterrupted("bert", "sps", "cpu", tmp_path)
    assert_same_run(resumed, reference, "bucketed run resumed against uninterrupted")
    plain = sample_order.epoch_order(0, 0, 40)
    bucketed = sample_order.bucketed_order(
        0, 0, bert_data(40, seed=1)["attention_mask"].sum(1), 8, 2
    )
    assert not torch.equal(plain, bucketed)  # the option changed the batches
