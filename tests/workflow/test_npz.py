"""npz files (attnbias.workflow.npz)."""

from __future__ import annotations

import numpy as np
import pytest
from stored_files import (
    HYPOTHESES,
    SEEDS,
    claiming_shape,
    seed_identities,
    small_dataset,
    write_data,
)

from attnbias.workflow import npz
from attnbias.workflow.store import FileContractError


def test_an_npz_header_rewritten_to_its_own_shape_still_reads(tmp_path):
    """The negative control of tests/workflow/test_store.py::test_an_npz_header_claiming_more_
    than_its_member_holds_is_refused: the same rewrite, claiming what is there."""
    path = tmp_path / "fig2.npz"
    write_data(path)
    claiming_shape(path, "seed1/X.npy", (4, 3, 5))
    assert npz.load_data(path)[1]["X"].shape == (4, 3, 5)


def _write_with_queries(path, Z_of_seed1) -> None:
    """A data file whose seed 1 carries the queries Z (cross-attention)."""
    datasets = {s: small_dataset(s) for s in SEEDS}
    datasets[1]["Z"] = Z_of_seed1
    npz.save_seeds(path, datasets, seed_identities("data"), {s: HYPOTHESES for s in SEEDS})


def test_a_data_file_with_queries_reads_them(tmp_path):
    path = tmp_path / "fig2.npz"
    Z = np.random.default_rng(0).normal(size=(4, 5))
    _write_with_queries(path, Z)
    data = npz.load_data(path)
    np.testing.assert_array_equal(data[1]["Z"], Z)
    assert "Z" not in data[0]  # self-attention: no queries


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5,), (4, 5, 1)])
def test_a_data_file_whose_queries_have_the_wrong_shape_is_refused(tmp_path, shape):
    """Refused by the file, the seed and the key, with the shape it needs and how to rebuild."""
    path = tmp_path / "fig2.npz"
    _write_with_queries(path, np.ones(shape))
    with pytest.raises(FileContractError) as refused:
        npz.load_data(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: seed 1: its queries 'Z' have shape {shape}, ")
    assert "need one query per sample: shape (4, 5)" in message and "--forcerun" in message
