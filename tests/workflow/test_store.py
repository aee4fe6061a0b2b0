"""Content checksums: every file a job reads from an earlier stage holds the
sha256 its writer recorded, and every reader checks it, so a file edited in place (its
identity kept) is refused by path with the command that rebuilds it, never used.

Each kind of intermediate is written by the writers the jobs use (attnbias.workflow.io),
edited as a user or a script would (one value changed, every other entry and the metadata
kept), and read back by the reader its consumer uses.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import zipfile
from io import BytesIO
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from attnbias.data import models
from attnbias.svm import max_margin
from attnbias.workflow import (
    io,
    npz,
    parquet,
    provenance,
    store,
)


def _dataset_and_solution():
    ds = models.generate("example1", 0, dict(n=6, T=3, d=12))
    return ds, max_margin.to_arrays(max_margin.solve_for_dataset(ds, False, "test"))


def test_identity_names_config_mismatch_and_missing_identity(tmp_path):
    ds, _ = _dataset_and_solution()
    ident = store.identity("data", "fig2", {"n": 6}, seed=0)
    npz.save_seeds(tmp_path / "d.npz", {0: ds}, {0: ident})
    with pytest.raises(store.FileContractError, match="from another config"):
        npz.load_data(tmp_path / "d.npz", [store.identity("data", "fig2", {"n": 7}, seed=0)])
    npz.save_seeds(tmp_path / "old.npz", {0: ds}, {0: None})  # written without an identity
    with pytest.raises(store.FileContractError, match="records no identity"):
        npz.load_data(tmp_path / "old.npz", [ident])
    # another program's: neither identity nor checksum
    np.savez(tmp_path / "other.npz", **{f"seed0/{k}": v for k, v in ds.items()})
    with pytest.raises(store.FileContractError, match=r"other.npz \(seed 0\) records no checksum"):
        npz.load_data(tmp_path / "other.npz", [ident])
    npz.save_npz(tmp_path / "flat.npz", ds, ident)  # the layout before the seed axis
    with pytest.raises(store.FileContractError, match=r"flat.npz holds seeds \[\], but"):
        npz.load_data(tmp_path / "flat.npz", [ident])


def test_aggregate_refuses_a_run_twice(tmp_path):
    table = parquet.metrics_table("fig2", "gd", 0, np.array([0, 1]), {"loss": np.array([1.0, 0.5])})
    for name in ("a", "b"):
        parquet.save_table(tmp_path / f"{name}.parquet", table)
    with pytest.raises(store.FileContractError, match="both hold the run experiment fig2"):
        parquet.concat_tables([tmp_path / "a.parquet", tmp_path / "b.parquet"])


def test_rows_of_a_run_must_match_its_identity(tmp_path):
    table = parquet.metrics_table("fig2", "ngd", 0, np.array([0]), {"loss": np.array([1.0])})
    claimed = store.identity("run", "fig2", {}, seed=0, optimizer="gd")
    parquet.save_table(tmp_path / "r.parquet", parquet.with_identity(table, claimed))
    with pytest.raises(store.FileContractError, match="rows of optimizer"):
        parquet.read_table(tmp_path / "r.parquet", claimed)


def test_file_json_is_strict(tmp_path):
    with pytest.raises(ValueError):
        store.identity("data", "fig2", {"lr": math.nan})
    table = pa.table({"x": [1]})
    with pytest.raises(ValueError):
        parquet.with_run_info(table, {"device": math.inf})
    parquet.save_table(tmp_path / "t.parquet", parquet.with_run_info(table, {"device": "cpu"}))
    json.loads(pq.read_schema(tmp_path / "t.parquet").metadata[parquet.RUN_INFO_KEY])


REPO = Path(__file__).resolve().parents[2]


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


def _run_table(optimizer: str = "gd") -> pa.Table:
    """A training job's table: the rows of every seed (SEEDS), each seed's identity."""
    iterations = np.array([0, 10, 100])
    metrics = {"gap_W": np.array([1.0, 0.5, 0.25]), "loss": np.array([0.7, 0.3, 0.1])}
    tables = [parquet.metrics_table("fig2", optimizer, s, iterations, metrics) for s in SEEDS]
    table = parquet.with_run_info(pa.concat_tables(tables), {"device": "cpu"})
    return parquet.with_identity(table, _run_identities(optimizer))


def _run_identities(optimizer: str = "gd") -> list[dict]:
    return [store.identity("run", "fig2", CONFIG, seed=s, optimizer=optimizer) for s in SEEDS]


def _save_run_table(path, optimizer: str = "gd") -> None:
    parquet.save_table(path, _run_table(optimizer), by_seed=True)


def _edit_npz(path, key: str) -> None:
    """Change one value of `key` in place, keeping every other entry (identity, hypotheses,
    checksums) and the mtime."""
    stat = path.stat()
    with np.load(path) as f:
        entries = {k: f[k] for k in f.files}
    changed = entries[key].copy()
    if changed.dtype.names:  # the hypotheses report: its first quantity
        changed[changed.dtype.names[0]] += 1
    else:
        changed.flat[0] += 1
    np.savez(path, **{**entries, key: changed})
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _edit_table(path, column: str = "value") -> None:
    """Change the last value of `column` in place (the final gap, in a run's table), keeping
    the schema metadata (identity, run info, checksum) and the mtime."""
    stat = path.stat()
    table = pq.read_table(path)
    values = table.column(column).to_numpy().copy()
    values[-1] *= 10
    edited = table.set_column(table.schema.get_field_index(column), column, pa.array(values))
    pq.write_table(edited.replace_schema_metadata(table.schema.metadata), path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _identities(kind: str) -> dict[int, dict]:
    return {s: store.identity(kind, "fig2", CONFIG, seed=s) for s in SEEDS}


def _write_data(path):
    datasets = {s: _dataset(s) for s in SEEDS}
    npz.save_seeds(path, datasets, _identities("data"), {s: HYPOTHESES for s in SEEDS})


def _write_svm(path):
    arrays = {"W_mm": np.eye(5), "W_mm_kkt_residual": np.array(0.0)}
    hypotheses = {s: {"cond1_sv_fraction": 0.5} for s in SEEDS}
    npz.save_seeds(path, {s: arrays for s in SEEDS}, _identities("svm"), hypotheses)


def _write_final(path):
    finals = {s: {"W": np.eye(5), "u": np.ones(5)} for s in SEEDS}
    npz.save_seeds(path, finals, _identities("final"))


def _write_aggregate(path, tmp_path):
    runs = []
    for optimizer in ("gd", "ngd"):
        runs.append(tmp_path / f"{optimizer}.parquet")
        _save_run_table(runs[-1], optimizer)
    table = parquet.concat_tables(runs)
    parquet.save_table(
        path, parquet.with_identity(table, store.identity("metrics", "fig2", CONFIG))
    )


# kind: (file name, writer, reader, how to edit it); the files of a seed axis get an edit
# of seed 1 (the last), which the error names
KINDS = {
    "data": ("data.npz", _write_data, npz.load_data, lambda p: _edit_npz(p, "seed1/X")),
    "data hypotheses": (
        "data.npz",
        _write_data,
        npz.load_hypotheses,
        lambda p: _edit_npz(p, f"seed1/{npz.HYPOTHESES_KEY}"),
    ),
    "svm": (
        "svm.npz",
        _write_svm,
        lambda p: npz.load_seeds(p, ("W_mm",)),
        lambda p: _edit_npz(p, "seed1/W_mm"),
    ),
    "final parameters": (
        "gd.final.npz",
        _write_final,
        lambda p: npz.load_seeds(p, ("u",)),
        lambda p: _edit_npz(p, "seed1/u"),
    ),
    "train table": ("gd.parquet", _save_run_table, parquet.read_table, _edit_table),
    "train table metadata": (
        "gd.parquet",
        _save_run_table,
        parquet.read_table,
        lambda p: _edit_metadata(p),
    ),
    "aggregate": ("metrics.parquet", None, parquet.load_metrics, _edit_table),
    # the training facts the figures' provenance reads from a run's metadata
    "train table run info": (
        "gd.parquet",
        _save_run_table,
        parquet.run_info,
        lambda p: _edit_metadata(p),
    ),
    # where a real-data figure's data and weights were found (check_real_data's record)
    "real-data source": (
        "source.json",
        lambda p: io.save_json(p, {"fixture": False, "datasets": [{"path": "/data/mnist"}]}),
        io.load_json,
        lambda p: p.write_text(p.read_text().replace("false", "true")),
    ),
}


def _edit_metadata(path) -> None:
    table = pq.read_table(path)
    metadata = {**table.schema.metadata, parquet.RUN_INFO_KEY: b'{"device":"cuda"}'}
    pq.write_table(table.replace_schema_metadata(metadata), path)


def _written(kind: str, tmp_path):
    name, write, read, edit = KINDS[kind]
    path = tmp_path / name
    write(path) if write is not None else _write_aggregate(path, tmp_path)
    return path, read, edit


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_intact_file_reads(kind, tmp_path):
    path, read, _ = _written(kind, tmp_path)
    read(path)  # the negative control of the next test: the writer's file passes


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_edited_file_is_refused_naming_it_and_its_rebuild(kind, tmp_path):
    path, read, edit = _written(kind, tmp_path)
    edit(path)
    with pytest.raises(store.FileContractError) as err:
        read(path)
    message = str(err.value)
    assert f"{path} was changed after its job wrote it" in message
    assert f"snakemake --forcerun {path}" in message


SEEDED = ["data", "data hypotheses", "svm", "final parameters", "train table"]


@pytest.mark.parametrize("kind", SEEDED)
def test_an_edited_seed_is_refused_by_name(kind, tmp_path):
    """A file of every seed checks each seed on its own: the error names the seed edited."""
    path, read, edit = _written(kind, tmp_path)
    edit(path)
    with pytest.raises(store.FileContractError, match="seed 1") as err:
        read(path)
    assert "seed 0" not in str(err.value)


@pytest.mark.parametrize("kind", ["data", "svm", "final parameters", "train table"])
def test_a_file_of_another_seed_count_is_refused_by_name(kind, tmp_path):
    """A config that now asks for three seeds refuses the file of two (and of one)."""
    path, _, _ = _written(kind, tmp_path)
    file_kind = {"train table": "run", "final parameters": "final"}.get(kind, kind)
    for seeds in ([0, 1, 2], [0]):
        optimizer = "gd" if file_kind == "run" else None
        expect = [
            store.identity(file_kind, "fig2", CONFIG, seed=s, optimizer=optimizer) for s in seeds
        ]
        with pytest.raises(
            store.FileContractError, match=rf"holds seeds \[0, 1\], but .* {re.escape(str(seeds))}"
        ):
            parquet.read_table(path, expect) if file_kind == "run" else npz.load_seeds(
                path, (), expect
            )
    expect = [store.identity(file_kind, "fig2", CONFIG, seed=s, optimizer=optimizer) for s in SEEDS]
    parquet.read_table(path, expect) if file_kind == "run" else npz.load_seeds(path, (), expect)


def test_the_aggregate_refuses_an_edited_run(tmp_path):
    """The issue's case: a run's final gap_W changed in place, identity kept."""
    run = tmp_path / "gd.parquet"
    _save_run_table(run)
    _edit_table(run)
    with pytest.raises(store.FileContractError, match=f"{run} was changed after its job wrote it"):
        parquet.concat_tables([run], [_run_identities()])


@pytest.mark.parametrize(
    "change",
    ["drop the checksum", "add an entry", "drop an entry", "garble the checksum"],
)
def test_an_npz_without_its_recorded_checksums_is_refused(change, tmp_path):
    path = tmp_path / "data.npz"
    _write_data(path)
    with np.load(path) as f:
        entries = {k: f[k] for k in f.files}
    if change == "drop the checksum":
        del entries[f"seed1/{npz.CHECKSUM_KEY}"]
    elif change == "add an entry":
        entries["seed1/extra"] = np.zeros(2)
    elif change == "drop an entry":
        del entries["seed1/W0"]
    else:
        entries[f"seed1/{npz.CHECKSUM_KEY}"] = np.array("{not json")
    np.savez(path, **entries)
    with pytest.raises(store.FileContractError, match=f"{path}.*seed 1"):
        npz.load_data(path)


def test_a_json_record_without_a_checksum_is_refused(tmp_path):
    path = tmp_path / "source.json"
    path.write_text('{"fixture": false}')
    with pytest.raises(store.FileContractError, match="records no checksum"):
        io.load_json(path)


def test_a_table_without_a_checksum_is_refused(tmp_path):
    path = tmp_path / "gd.parquet"
    pq.write_table(_run_table(), path)  # another program's writer: no checksum
    with pytest.raises(store.FileContractError, match=f"{path} records no checksum"):
        parquet.read_table(path)


def test_a_frame_round_trips_with_its_checksum(tmp_path):

    frame = pd.DataFrame({"bin": [0.1, 0.2], "count": [3, 4], "name": ["a", None]})
    path = tmp_path / "values.parquet"
    parquet.save_frame(path, frame)
    pd.testing.assert_frame_equal(parquet.load_frame(path), frame)
    _edit_table(path, "count")
    with pytest.raises(store.FileContractError, match="was changed after its job wrote it"):
        parquet.load_frame(path)


def test_the_checksums_catch_edits_not_forgery_as_the_file_contract_says(tmp_path):
    """What the checksums promise: they are unkeyed and stored in the
    file, so an edit is caught, but an edit followed by the digest recomputed with our own
    helper reads as intact. docs/file-contract.md states exactly that; if the digests
    became keyed (and this forgery were caught), the page would need rewriting."""
    path = tmp_path / "gd.parquet"
    _save_run_table(path)
    table = pq.read_table(path)
    values = table.column("value").to_numpy().copy()
    values[0] += 1
    edited = table.set_column(table.schema.get_field_index("value"), "value", pa.array(values))
    pq.write_table(edited, path)
    with pytest.raises(store.FileContractError, match=str(path)):  # a careless edit: caught
        parquet.read_table(path)
    parquet.save_table(path, edited, by_seed=True)  # the same edit, digest recomputed: a forgery
    assert parquet.read_table(path).column("value").to_numpy()[0] == values[0]
    contract = (REPO / "docs/file-contract.md").read_text()
    promise = " ".join(contract.split())
    assert "catch accidental and careless changes" in promise
    assert "not forgery" in promise


# ---- bounded reads: a hostile file in place of a result is refused by path,
# unopened where it is no regular file, before numpy allocates what an .npz header claims


def _write_npz(path):
    npz.save_npz(path, _dataset(), store.identity("data", "fig2", CONFIG))


# what a reader names in its error: the npz codec (seeded and not), Parquet, JSON, and the
# provenance's input checksums
READERS = {
    "data": (_write_data, npz.load_data),
    "npz": (_write_npz, npz.load_npz),
    "parquet": (_save_run_table, parquet.read_table),
    "json": (lambda p: io.save_json(p, {"fixture": False}), io.load_json),
    "inputs checksums": (_write_data, lambda p: provenance.files_sha256([p])),
}


SUFFIX = {"data": ".npz", "npz": ".npz", "parquet": ".parquet", "json": ".json"}


def _refused(read, path, kind: str) -> None:
    with pytest.raises(store.FileContractError) as err:
        read(path)
    message = str(err.value)
    assert f"{path} cannot be read" in message
    assert f"{kind}, not a regular file: not opened" in message
    assert f"snakemake --forcerun {path}" in message


@pytest.mark.parametrize("reader", list(READERS))
def test_a_link_to_a_device_is_refused_unopened(reader, tmp_path):
    """/dev/null stands for /dev/zero, which the old reader read until memory ran out."""
    path = tmp_path / f"fig2{SUFFIX.get(reader, '.npz')}"
    path.symlink_to("/dev/null")
    _refused(READERS[reader][1], path, "a character device")


@pytest.mark.parametrize("reader", list(READERS))
def test_a_directory_is_refused_and_the_error_says_to_remove_it(reader, tmp_path):
    path = tmp_path / f"fig2{SUFFIX.get(reader, '.npz')}"
    path.mkdir()
    _refused(READERS[reader][1], path, "a directory")
    with pytest.raises(store.FileContractError, match="remove it first"):
        READERS[reader][1](path)


@pytest.mark.parametrize("reader", list(READERS))
def test_a_fifo_is_refused_unopened(reader, tmp_path):
    """The old reader opened the FIFO and waited for a writer. Here a writer thread feeds
    it whatever opens it, so a reader that opens it returns (and fails the test) instead of
    blocking; the reader under test must never have opened it."""
    path = tmp_path / f"fig2{SUFFIX.get(reader, '.npz')}"
    os.mkfifo(path)
    done, opened = threading.Event(), []

    def feed():
        while not done.is_set():
            with open(path, "wb") as fh:  # waits for a reader
                opened.append(True)
                try:
                    fh.write(b"not a result\n")
                except BrokenPipeError:
                    pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        _refused(READERS[reader][1], path, "a FIFO")
        assert not opened
    finally:
        done.set()
        while writer.is_alive():  # release the writer waiting in open()
            release = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            writer.join(0.05)
            os.close(release)


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


@pytest.mark.parametrize(
    ("reader", "member"), [("data", "seed1/X.npy"), ("npz", "X.npy")], ids=["data", "npz"]
)
def test_an_npz_header_claiming_more_than_its_member_holds_is_refused(reader, member, tmp_path):
    """A header claiming 10**12 float64s (8 TB) over a few hundred bytes of data: the old
    reader had numpy allocate them (a bare _ArrayMemoryError); this one refuses it by path."""
    write, read = READERS[reader]
    path = tmp_path / "fig2.npz"
    write(path)
    _claiming(path, member, (10**12,))
    with pytest.raises(store.FileContractError) as err:
        read(path)
    message = str(err.value)
    key = member.removesuffix(".npy")
    assert (
        f"{path} cannot be read as a .npz file (its entry {key!r} claims 8000000000000" in message
    )
    assert f"snakemake --forcerun {path}" in message


def test_a_shared_file_keeps_other_writers_temporary_files(tmp_path):
    """A file that several jobs may write at once (a data root's extracted file): a
    temporary file beside it may be another writer's, in flight, and is kept."""
    leftover = tmp_path / ".a.txt.abcdefgh.tmp"
    leftover.write_bytes(b"")
    with store.atomic_path(tmp_path / "a.txt", shared=True) as tmp:
        Path(tmp).write_text("x\n")
    assert leftover.exists() and (tmp_path / "a.txt").read_text() == "x\n"
