"""npz files (attnbias.workflow.npz)."""

from __future__ import annotations

import zipfile
from io import BytesIO

import numpy as np

from attnbias.workflow import npz, store

CONFIG = {"lr": 0.1}


HYPOTHESES = {"ass1": 0.5, "cond1": True}


def _dataset(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "X": rng.normal(size=(4, 3, 5)),
        "y": np.array([1.0, -1.0, 1.0, -1.0]),
        "opt": np.zeros(4, dtype=np.int64),
        "W0": np.zeros((5, 5)),
    }


SEEDS = (0, 1)


def _identities(kind: str) -> dict[int, dict]:
    return {s: store.identity(kind, "fig2", CONFIG, seed=s) for s in SEEDS}


def _write_data(path):
    datasets = {s: _dataset(s) for s in SEEDS}
    npz.save_seeds(path, datasets, _identities("data"), {s: HYPOTHESES for s in SEEDS})


def _claiming(path, member: str, shape: tuple) -> None:
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


def test_an_npz_header_rewritten_to_its_own_shape_still_reads(tmp_path):
    """The negative control of the test above: the same rewrite, claiming what is there."""
    path = tmp_path / "fig2.npz"
    _write_data(path)
    _claiming(path, "seed1/X.npy", (4, 3, 5))
    assert npz.load_data(path)[1]["X"].shape == (4, 3, 5)
