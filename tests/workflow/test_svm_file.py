"""The SVM file (attnbias.workflow.svm_file): W_mm checked against its data."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import max_margin
from attnbias.workflow import (
    npz,
    store,
)
from attnbias.workflow.svm_file import load_svm


def _dataset_and_solution():
    ds = models.generate("example1", 0, dict(n=6, T=3, d=12))
    return ds, max_margin.to_arrays(max_margin.solve_for_dataset(ds, False, "test"))


def test_w_mm_is_checked_against_its_data(tmp_path):
    ds, arrays = _dataset_and_solution()
    ident = store.identity("svm", "fig2", {"any": 1}, seed=0)
    npz.save_seeds(tmp_path / "good.npz", {0: arrays}, {0: ident})
    good = load_svm(tmp_path / "good.npz", {0: ds}, [ident])
    assert np.array_equal(good[0]["W_mm"], arrays["W_mm"])
    # twice W_mm satisfies every constraint, but is not the max-margin solution
    npz.save_seeds(tmp_path / "long.npz", {0: {**arrays, "W_mm": 2 * arrays["W_mm"]}}, {0: ident})
    with pytest.raises(store.FileContractError, match=r"long\.npz: seed 0: W_mm is not the max-"):
        load_svm(tmp_path / "long.npz", {0: ds}, [ident])
    # another seed's solution: the constraints of this data fail
    other = models.generate("example1", 1, dict(n=6, T=3, d=12))
    other_arrays = max_margin.to_arrays(max_margin.solve_for_dataset(other, False, "other"))
    npz.save_seeds(tmp_path / "other.npz", {0: other_arrays}, {0: ident})
    with pytest.raises(store.FileContractError, match="smallest margin"):
        load_svm(tmp_path / "other.npz", {0: ds}, [ident])
