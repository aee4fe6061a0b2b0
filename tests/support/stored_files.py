"""The small files of the file-contract tests: a data file's arrays, a run table and the
identities they hold (fig2 under CONFIG, every seed of SEEDS), an example1 dataset with its
max-margin solution, and an npz member's header rewritten to claim another shape. For
tests/workflow/test_npz.py, test_parquet.py, test_store.py and test_svm_file.py."""

from __future__ import annotations

import zipfile
from io import BytesIO

import numpy as np
import pyarrow as pa

from attnbias.data import models
from attnbias.svm import max_margin
from attnbias.workflow import npz, parquet, store

CONFIG = {"lr": 0.1}


HYPOTHESES = {"ass1": 0.5, "cond1": True}


SEEDS = (0, 1)


def small_dataset(seed: int = 0) -> dict[str, np.ndarray]:
    """A data file's arrays for one seed (n=4, T=3, d=5)."""
    rng = np.random.default_rng(seed)
    return {
        "X": rng.normal(size=(4, 3, 5)),
        "y": np.array([1.0, -1.0, 1.0, -1.0]),
        "opt": np.zeros(4, dtype=np.int64),
        "W0": np.zeros((5, 5)),
    }


def seed_identities(kind: str) -> dict[int, dict]:
    """Each seed's identity of a `kind` file of fig2 under CONFIG."""
    return {s: store.identity(kind, "fig2", CONFIG, seed=s) for s in SEEDS}


def write_data(path):
    """A data file of every seed at `path`, with identities and hypotheses."""
    datasets = {s: small_dataset(s) for s in SEEDS}
    npz.save_seeds(path, datasets, seed_identities("data"), {s: HYPOTHESES for s in SEEDS})


def claiming_shape(path, member: str, shape: tuple) -> None:
    """Rewrite `member`'s .npy header in the .npz `path` to claim `shape`, its data and
    every other member kept (the member then holds far fewer bytes than it claims)."""
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    raw = members[member]
    with BytesIO(raw) as stream:
        np.lib.format.read_magic(stream)
        _, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        data = raw[stream.tell() :]
    with BytesIO() as header:
        descr = np.lib.format.dtype_to_descr(dtype)
        header_fields = {"descr": descr, "fortran_order": fortran, "shape": shape}
        np.lib.format.write_array_header_1_0(header, header_fields)
        members[member] = header.getvalue() + data
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)


def run_table(optimizer: str = "gd") -> pa.Table:
    """A training job's table: the rows of every seed (SEEDS), each seed's identity."""
    iterations = np.array([0, 10, 100])
    metrics = {"gap_W": np.array([1.0, 0.5, 0.25]), "loss": np.array([0.7, 0.3, 0.1])}
    tables = [parquet.metrics_table("fig2", optimizer, s, iterations, metrics) for s in SEEDS]
    table = parquet.with_run_info(pa.concat_tables(tables), {"device": "cpu"})
    return parquet.with_identity(table, run_identities(optimizer))


def run_identities(optimizer: str = "gd") -> list[dict]:
    """The run identities of `optimizer`, one a seed."""
    return [store.identity("run", "fig2", CONFIG, seed=s, optimizer=optimizer) for s in SEEDS]


def dataset_and_solution():
    """An example1 dataset and its max-margin arrays (W only)."""
    ds = models.generate("example1", 0, dict(n=6, T=3, d=12))
    return ds, max_margin.to_arrays(max_margin.solve_for_dataset(ds, False, "test"))
