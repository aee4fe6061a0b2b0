"""The sample order of a real-data epoch: a pure function of (seed, epoch), and of the
samples' lengths where batches group alike lengths, so that a resumed run draws exactly the
batches an uninterrupted one draws (attnbias.realdata.trainer)."""

from __future__ import annotations

import torch


def epoch_order(seed: int, epoch: int, n: int) -> torch.Tensor:
    """The sample order of one epoch: a function of (seed, epoch) only, so resume is exact."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=generator)


def bucketed_order(
    seed: int, epoch: int, lengths: torch.Tensor, batch_size: int, pool: int
) -> torch.Tensor:
    """`epoch_order` with batches of alike lengths: the samples of the epoch's batches (the
    same ones `epoch_order` would use) are cut into pools of `pool` batches, each pool
    sorted by length and cut into batches, and then the batches are shuffled, so that
    dynamic padding pads less. Still a function of (seed, epoch) and the lengths only."""
    order = epoch_order(seed, epoch, len(lengths))
    used = len(order) // batch_size * batch_size  # the last partial batch stays dropped
    pools = order[:used].split(pool * batch_size)
    ordered = torch.cat([p[torch.argsort(lengths[p], stable=True)] for p in pools])
    generator = torch.Generator().manual_seed((seed * 1_000_003 + epoch) * 2 + 1)
    batches = ordered.view(-1, batch_size)[torch.randperm(used // batch_size, generator=generator)]
    return torch.cat([batches.reshape(-1), order[used:]])


# the probe subset's generator seed: one subset for every run, seed and optimizer, so that a
# race reads every run's loss on the same samples
PROBE_SEED = 20_240_208


def probe_subset(n: int, size: int) -> torch.Tensor:
    """The indices (sorted) of the fixed probe subset of a training set of `n` samples: `size`
    of them, drawn once by PROBE_SEED, the same for every run. Refuses a size above `n`,
    naming the config key."""
    if size > n:
        raise ValueError(
            f"train.probe_samples is {size}, larger than the training set ({n} samples): "
            "the probe is a subset of the training set"
        )
    generator = torch.Generator().manual_seed(PROBE_SEED)
    return torch.randperm(n, generator=generator)[:size].sort().values
