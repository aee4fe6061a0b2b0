"""The neighbours' data models (attnbias.data.neighbours): their generator's draws restated
here from their code (TF-as-SVM's local_converge.ipynb, AttentionMD's
tools/generate_data.py) and compared with ours bit for bit; the joint instance; refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnbias.data import models, neighbours


def their_instance(seed: int, n: int, T: int, d: int):
    """Their draw order on a torch.Generator seeded with `seed`: v, Y, X, Z; v, each token
    and each query scaled to unit norm in float32, then made double."""
    g = torch.Generator()
    g.manual_seed(seed)
    v = torch.randn((d), generator=g)
    Y = 2 * torch.ones(n) * (torch.randn(n, generator=g) > 0) - 1
    X = torch.randn((n, T, d), generator=g)
    Z = torch.randn((n, d), generator=g)
    v /= torch.norm(v)
    X /= torch.norm(X, dim=-1, keepdim=True)
    Z /= torch.norm(Z, dim=-1, keepdim=True)
    best = ((X @ v) * Y.view(-1, 1)).argmax(dim=-1)
    return X.double().numpy(), Y.double().numpy(), Z.double().numpy(), v.double().numpy(), best


@pytest.mark.parametrize("seed, sizes", [(0, (6, 8, 10)), (1, (6, 8, 10)), (17, (5, 15, 3))])
def test_their_generator_is_reproduced_exactly(seed, sizes):
    n, T, d = sizes
    ours = models.generate("cross_gaussian", seed, dict(n=n, T=T, d=d))
    X, Y, Z, v, best = their_instance(seed, n, T, d)
    for key, theirs in (("X", X), ("y", Y), ("Z", Z), ("u", v)):
        np.testing.assert_array_equal(ours[key], theirs, err_msg=key)
        assert ours[key].dtype == np.float64
    np.testing.assert_array_equal(ours["opt"], best.numpy())
    np.testing.assert_array_equal(ours["W0"], np.zeros((d, d)))
    assert set(ours) == {"X", "y", "Z", "u", "W0", "opt"}
    np.testing.assert_allclose(np.linalg.norm(ours["Z"], axis=1), 1.0, rtol=1e-6)


def test_another_seed_or_order_gives_other_data():
    """Controls: the seed is the run's (seed 1 is not seed 0's data), and drawing Z before
    X (another order) changes X."""
    zero, one = (models.generate("cross_gaussian", s, {}) for s in (0, 1))
    assert not np.array_equal(zero["X"], one["X"])
    g = torch.Generator()
    g.manual_seed(0)
    torch.randn(10, generator=g), torch.randn(6, generator=g), torch.randn((6, 10), generator=g)
    X_late = torch.randn((6, 8, 10), generator=g)
    assert not np.allclose(zero["X"], (X_late / X_late.norm(dim=-1, keepdim=True)).double())


def test_the_starts_come_after_their_draws_and_are_seeded():
    base = models.generate("cross_gaussian", 3, {})
    for init in ("normal", "linear"):
        a = models.generate("cross_gaussian", 3, {"init": init})
        b = models.generate("cross_gaussian", 3, {"init": init})
        np.testing.assert_array_equal(a["W0"], b["W0"])  # seeded
        for key in ("X", "y", "Z", "u"):  # their draws untouched by ours after them
            np.testing.assert_array_equal(a[key], base[key])
    normal = models.generate("cross_gaussian", 3, {"init": "normal", "init_std": 2.0})["W0"]
    assert 1.0 < normal.std() < 3.0
    linear = models.generate("cross_gaussian", 3, {"init": "linear"})["W0"]
    assert np.abs(linear).max() <= 1 / np.sqrt(10) and np.abs(linear).max() > 0.2


def test_bad_parameters_are_refused_naming_them():
    with pytest.raises(models.DataError, match="init must be one of"):
        models.generate("cross_gaussian", 0, {"init": "xavier"})
    with pytest.raises(models.DataError, match="init_std"):
        models.generate("cross_gaussian", 0, {"init": "normal", "init_std": 0.0})
    with pytest.raises(models.DataError, match="T >= 2"):
        models.generate("cross_gaussian", 0, {"T": 1})
    with pytest.raises(models.DataError, match="integer seed"):
        neighbours.cross_gaussian(np.random.default_rng([1, 2]))


def test_the_joint_instance_is_theirs():
    """Their literals as torch.Tensor (float32) made double; self-attention (no Z), u
    trained from 0 (no u), W from 0."""
    ds = models.generate("attentionmd_joint", 0, {})
    theirs = torch.Tensor(
        [[[-2.7, 1.2], [1.4, 2.1], [1.3, -0.1]], [[0.4, -2.2], [-1.1, -0.4], [0.9, 0.1]]]
    ).double()
    np.testing.assert_array_equal(ds["X"], theirs.numpy())
    assert ds["X"][0, 0, 0] != -2.7  # the float32 literal, as theirs
    np.testing.assert_array_equal(ds["y"], [1.0, -1.0])
    np.testing.assert_array_equal(ds["W0"], np.zeros((2, 2)))
    assert set(ds) == {"X", "y", "opt", "W0"}
    np.testing.assert_array_equal(ds["opt"], [1, 0])
