"""npz files (attnbias.workflow.npz)."""

from __future__ import annotations

import os
import time
import tracemalloc
import zipfile

import hostile_archives
import numpy as np
import pytest
from stored_files import SEEDS, claiming_shape, seed_identities, small_dataset, write_data

from attnbias.workflow import npz, store


def test_an_npz_header_rewritten_to_its_own_shape_still_reads(tmp_path):
    """The negative control of tests/workflow/test_store.py::test_an_npz_header_claiming_more_
    than_its_member_holds_is_refused: the same rewrite, claiming what is there."""
    path = tmp_path / "fig2.npz"
    write_data(path)
    claiming_shape(path, "seed1/X.npy", (4, 3, 5))
    assert npz.load_data(path)[1]["X"].shape == (4, 3, 5)


# ---- archives bounded by what they hold: a member's size is read from the file's bytes
# (compressed sizes, MAX_RATIO, MAX_INFLATED) before numpy allocates anything


def _refused_fast_and_small(path, read, why: str) -> None:
    """`read(path)` refuses the file by path, naming `why`, within a second, and allocates
    no more than the file's size times the ratio cap on the way (the old reader allocated
    1.2 GB for the bomb below, and 13.8 s, before its checksum refused it)."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(store.FileContractError) as err:
            read(path)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(err.value)
    assert f"{path} cannot be read as a .npz file" in message
    assert why in message
    assert f"snakemake --forcerun {path}" in message
    assert elapsed < 1.0
    assert peak < os.path.getsize(path) * npz.MAX_RATIO


@pytest.mark.parametrize("read", [npz.load_npz, npz.load_data], ids=["npz", "data"])
def test_a_deflated_bomb_of_zeros_is_refused_before_anything_is_allocated(read, tmp_path):
    """1.17 MB deflating to 1.2 GB of zeros, every size and CRC in it true."""
    path = tmp_path / "fig2.npz"
    hostile_archives.zeros_bomb(path)
    assert os.path.getsize(path) < 1.2e6
    _refused_fast_and_small(path, read, "its entry 'X' claims 1205862528 bytes from")


def test_a_zip_directory_lying_about_a_member_size_is_refused_by_path(tmp_path):
    """A 5 KB data file whose directory (and .npy header) says seed1/X holds 800 GB: the
    old reader passed its size guard and died in a bare MemoryError naming no file."""
    path = tmp_path / "fig2.npz"
    write_data(path)
    hostile_archives.lying_directory(path, "seed1/X.npy", 10**11)
    assert os.path.getsize(path) < 6000
    _refused_fast_and_small(path, npz.load_data, "its entry 'seed1/X' claims 800000000128 bytes")


def test_members_sharing_one_compressed_kernel_are_refused(tmp_path):
    """Each of 201 entries within the ratio cap, all of them 200 MiB from 13 KB: their
    compressed sizes add up past the file's."""
    path = tmp_path / "fig2.npz"
    hostile_archives.overlapping_bomb(path)
    _refused_fast_and_small(path, npz.load_npz, "members sharing bytes")


def test_the_deflated_total_is_capped(tmp_path, monkeypatch):
    """The control of the cap on all compressed members together: a legitimate deflated
    file reads (below), and is refused where the cap is below its size."""
    path = tmp_path / "fig2.npz"
    _write_deflated(path, 2)
    monkeypatch.setattr(npz, "MAX_INFLATED", 10**6)
    _refused_fast_and_small(path, npz.load_data, "past the 1000000 an .npz")


def _write_deflated(path, mebibytes: int) -> None:
    """A data file of ours, its X a `mebibytes` MiB array of floats per seed, rewritten with
    every member deflated (as np.savez_compressed writes them)."""
    rng = np.random.default_rng(0)
    datasets = {s: small_dataset(s) for s in SEEDS}
    for arrays in datasets.values():
        arrays["X"] = rng.normal(size=(mebibytes * 2**17, 1, 1)).round(3)
    npz.save_seeds(path, datasets, seed_identities("data"))
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)


@pytest.mark.parametrize("deflated", [False, True], ids=["stored", "deflated"])
def test_a_legitimate_file_of_some_megabytes_reads(deflated, tmp_path):
    """The control: 8 MiB of floats per seed, stored as our writers store them, or
    deflated, reads whole."""
    path = tmp_path / "fig2.npz"
    if deflated:
        _write_deflated(path, 8)
    else:
        datasets = {s: {**small_dataset(s), "X": np.ones((2**20, 1, 1))} for s in SEEDS}
        npz.save_seeds(path, datasets, seed_identities("data"))
    start = time.perf_counter()
    assert npz.load_data(path)[1]["X"].size == 2**20
    assert time.perf_counter() - start < 10
