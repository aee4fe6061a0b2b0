"""The file contract between the pipeline's stages. Every write is atomic.

  results/data/{experiment}/seed{seed}.npz      X (n,T,d), y (n,), opt (n,), W0 (d,d), [u (d,)]
  results/svm/{experiment}/seed{seed}.npz       W_mm (d,d), [u_mm (d,)], n_support, kkt_residual
  results/train/{experiment}/{optimizer}/seed{seed}.parquet   metrics, long format
  results/train/{experiment}/{optimizer}/seed{seed}.final.npz W (d,d), u (d,)
  results/{experiment}/metrics.parquet          all optimizers and seeds, long format

Long format: one row per (experiment, optimizer, seed, iteration, metric) with its value.
A file is written beside its target and renamed into place, so a killed job never leaves
a half-written file that a later run would take for a result.

Every file knows what it is: its identity (kind, experiment, seed, optimizer where it has
one, and the sha256 of the config values that produced it; see `identity`) is stored in it
(.npz: the entry `attnbias_identity`; Parquet: the schema metadata `attnbias.identity`), and
every reader checks it against what its own path and the config say (`expect=`), so a file
copied or left over from another experiment, seed or config is refused by path, never used.
A file that cannot be read at all is reported by path too, with the command that rebuilds it.

Every file also holds the sha256 of its content, recorded by the writer (.npz: the entry
`attnbias_sha256`, one digest per entry, so a reader of a few entries checks just those;
Parquet: the schema metadata `attnbias.sha256`, of the columns and the other metadata), and
every reader checks it: a file edited after its job wrote it (a value changed in place, its
identity kept) is refused by path with the command that rebuilds it, never used.

The data and svm files also hold the hypotheses their job measured (attnbias.data.hypotheses:
the data job's `report(data)`, the svm job's `svm_report`; the entry `attnbias_hypotheses`),
so that the figure jobs print them without reloading the arrays and measuring again
(`seed_hypotheses`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pyarrow is imported where a table is read or written: a data or SVM
    import pyarrow as pa  # job (npz only) then never pays its ~0.2 s import

METRIC_COLUMNS = ("experiment", "optimizer", "seed", "iteration", "metric", "value")
RUN_INFO_KEY = b"attnbias.run"  # Parquet schema metadata: where a run ran (with_run_info)
IDENTITY_KEY = "attnbias_identity"  # .npz entry: the file's identity as JSON
IDENTITY_META = b"attnbias.identity"  # Parquet schema metadata: the same
HYPOTHESES_KEY = "attnbias_hypotheses"  # .npz entry: the hypotheses its job measured
CHECKSUM_KEY = "attnbias_sha256"  # .npz entry: {entry: sha256 of its dtype, shape, bytes}
CHECKSUM_META = b"attnbias.sha256"  # Parquet schema metadata: sha256 of columns and metadata
DATA_KEYS = ("X", "y", "opt", "W0")
# W_mm's smallest margin over its data's constraints is 1 (up to rounding), as is its KKT
# residual's bound in the svm stage's own checks
MARGIN_TOLERANCE = 1e-6
KKT_TOLERANCE = 1e-6


class FileContractError(ValueError):
    """A file that is not what its path says, or that cannot be read; names the file and
    how to rebuild it."""


def rebuild_hint(path) -> str:
    return (
        f"rebuild it with `snakemake --forcerun {path}` (add the --configfile and -c options "
        "of your build), which also reruns everything built from it"
    )


def _json(value) -> str:
    """Strict JSON (NaN and inf refused), sorted keys, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def config_sha256(config) -> str:
    """sha256 (hex) of the canonical JSON of `config`."""
    return hashlib.sha256(_json(config).encode()).hexdigest()


def identity(
    kind: str, experiment: str, config, *, seed: int | None = None, optimizer: str | None = None
) -> dict:
    """What a file is: its kind (data, svm, run, final, metrics), experiment, seed and
    optimizer where it has them, and the sha256 of the config values that produced it."""
    out = {"kind": kind, "experiment": experiment}
    if seed is not None:
        out["seed"] = int(seed)
    if optimizer is not None:
        out["optimizer"] = optimizer
    out["config_sha256"] = config_sha256(config)
    return out


def _describe(ident: dict) -> str:
    return ", ".join(
        f"{k} {ident[k]}"
        for k in ("kind", "experiment", "setting", "optimizer", "seed")
        if k in ident
    )


def check_identity(path, found: dict | None, expect: dict | None) -> None:
    """Raise FileContractError unless the identity `found` in `path` is `expect`."""
    if expect is None:
        return
    if found is None:
        raise FileContractError(
            f"{path} records no identity (written by an older attnbias or another program), "
            f"so it cannot be checked against its path and the config; {rebuild_hint(path)}"
        )
    if found == expect:
        return
    what = _describe(found)
    if {k: v for k, v in found.items() if k != "config_sha256"} == {
        k: v for k, v in expect.items() if k != "config_sha256"
    }:
        reason = f"holds {what} but from another config than the current one"
    else:
        reason = f"holds {what}, but its path and the config call for {_describe(expect)}"
    raise FileContractError(f"{path} {reason}; {rebuild_hint(path)}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | os.PathLike):
    """Yield a temporary path beside `path`; rename it onto `path` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are for sharing
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _write_with(path, writer: Callable[[str], None]) -> None:
    with atomic_path(path) as tmp:
        writer(tmp)


def _report_array(report: dict) -> np.ndarray:
    """A report {name: float or bool} as one 0-d structured array: its names, their order
    and every value kept exactly (inf and NaN too, which strict JSON refuses)."""
    fields = [(name, np.asarray(value).dtype) for name, value in report.items()]
    return np.array(tuple(report.values()), dtype=fields)


def save_npz(
    path, arrays: dict[str, np.ndarray], ident: dict | None = None, hypotheses: dict | None = None
) -> None:
    """Write `arrays` (and the file's identity and the hypotheses report its job measured,
    where given) as an uncompressed .npz."""
    if ident is not None:
        arrays = {**arrays, IDENTITY_KEY: np.array(_json(ident))}
    if hypotheses is not None:
        arrays = {**arrays, HYPOTHESES_KEY: _report_array(hypotheses)}
    arrays = {key: np.asarray(value) for key, value in arrays.items()}
    digests = {key: array_sha256(value) for key, value in arrays.items()}
    arrays[CHECKSUM_KEY] = np.array(_json(digests))

    def write(tmp):
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)

    _write_with(path, write)


def array_sha256(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes (C order): equal arrays, equal digests."""
    digest = hashlib.sha256(f"{np.lib.format.dtype_to_descr(array.dtype)}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).data if array.size else b"")
    return digest.hexdigest()


def _edited(path, what: str) -> FileContractError:
    return FileContractError(
        f"{path} was changed after its job wrote it ({what}), so it is not the result its "
        f"job computed and is not used; {rebuild_hint(path)}"
    )


def _check_npz_checksums(path, entries: dict[str, np.ndarray], whole: bool) -> None:
    """Take the recorded digests out of `entries` and check every entry read against them
    (`whole`: every entry was read, so none may be missing)."""
    if CHECKSUM_KEY not in entries:
        raise FileContractError(
            f"{path} records no checksum (written by an older attnbias or another program), "
            f"so an edit could not be told apart; {rebuild_hint(path)}"
        )
    try:
        recorded = json.loads(str(entries.pop(CHECKSUM_KEY)))
    except ValueError:
        raise _edited(path, f"its entry {CHECKSUM_KEY} is not the JSON its job wrote") from None
    for key, value in entries.items():
        if key not in recorded:
            raise _edited(path, f"it holds the entry {key!r}, which its job did not write")
        if array_sha256(value) != recorded[key]:
            raise _edited(path, f"the entry {key!r} differs from what its job wrote")
    missing = sorted(set(recorded) - set(entries)) if whole else []
    if missing:
        raise _edited(path, f"it lacks the entries {missing}, which its job wrote")


def _unreadable(path, err: Exception | str) -> FileContractError:
    why = err if isinstance(err, str) else f"{type(err).__name__}: {str(err).strip() or '?'}"
    return FileContractError(
        f"{path} cannot be read as a .{Path(path).suffix[1:]} file ({why}); it is damaged "
        f"or not what its name says; {rebuild_hint(path)}"
    )


def _read_npz(path, only: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The entries of an .npz file (those named in `only`, where given: the others are not
    read), never unpickling anything, each checked against the sha256 its writer recorded.
    An unreadable or edited file raises FileContractError naming it."""
    if Path(path).exists() and not zipfile.is_zipfile(path):  # np.load would try unpickling
        raise _unreadable(path, "not a zip archive, which every .npz file is, or truncated")
    wanted = None if only is None else (*only, CHECKSUM_KEY)
    try:
        with np.load(path, allow_pickle=False) as f:
            entries = {key: f[key] for key in f.files if wanted is None or key in wanted}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, AttributeError) as err:
        raise _unreadable(path, err) from None
    _check_npz_checksums(path, entries, whole=only is None)
    return entries


def _check_npz_identity(path, entries: dict[str, np.ndarray], expect: dict | None) -> None:
    """Take the identity out of `entries` and check it against `expect`."""
    found = entries.pop(IDENTITY_KEY, None)
    check_identity(path, None if found is None else json.loads(str(found)), expect)


def load_npz(
    path, required: tuple[str, ...] = (), expect: dict | None = None
) -> dict[str, np.ndarray]:
    """The arrays of an .npz file (never unpickling anything), its identity checked against
    `expect` where given. An unreadable file raises FileContractError naming it."""
    arrays = _read_npz(path)
    _check_npz_identity(path, arrays, expect)
    arrays.pop(HYPOTHESES_KEY, None)  # a report, not an array: load_hypotheses reads it
    missing = [key for key in required if key not in arrays]
    if missing:
        raise FileContractError(
            f"{path} lacks {missing}; it holds {sorted(arrays)}; {rebuild_hint(path)}"
        )
    return arrays


def load_data(path, expect: dict | None = None) -> dict[str, np.ndarray]:
    return load_npz(path, DATA_KEYS, expect)


def load_hypotheses(path, expect: dict | None = None) -> dict:
    """The hypotheses report that the job of a data or svm file stored in it (save_npz's
    `hypotheses`), as {name: float or bool}, without reading the file's arrays."""
    entries = _read_npz(path, (IDENTITY_KEY, HYPOTHESES_KEY))
    _check_npz_identity(path, entries, expect)
    if HYPOTHESES_KEY not in entries:
        raise FileContractError(
            f"{path} holds no hypotheses report (written by an older attnbias, before the "
            f"data and svm jobs stored theirs); {rebuild_hint(path)}"
        )
    stored = entries[HYPOTHESES_KEY]
    return {name: stored[name].item() for name in stored.dtype.names}


def seed_hypotheses(data_path, svm_path, expect: dict | None = None) -> dict:
    """One seed's hypotheses, as attnbias.data.hypotheses.report(data, svm) measures them: the
    data job's part, then the svm job's. `expect`: file -> identity, where checked."""
    expect = expect or {}
    return {
        **load_hypotheses(data_path, expect.get(data_path)),
        **load_hypotheses(svm_path, expect.get(svm_path)),
    }


def load_svm(path, data: dict[str, np.ndarray], expect: dict | None = None) -> dict:
    """An svm file, checked against its identity and against its data: W_mm must satisfy
    every constraint of the W-SVM of `data` with the smallest margin 1 (it is the shortest
    W that does), and its recorded KKT residual must be small."""
    arrays = load_npz(path, ("W_mm",), expect)
    W = arrays["W_mm"]
    X, opt = data["X"], data["opt"].astype(np.int64)
    n, T, d = X.shape
    if W.shape != (d, d) or not np.all(np.isfinite(W)):
        raise FileContractError(
            f"{path}: W_mm (shape {W.shape}) is not a finite (d, d) matrix for its data, "
            f"d={d}; {rebuild_hint(path)}"
        )
    rows = np.arange(n)
    keep = np.arange(T)[None, :] != opt[:, None]
    scores = np.einsum("ntd,de,ne->nt", X, W, X[:, 0, :])
    margins = (scores[rows, opt][:, None] - scores)[keep]
    low = float(margins.min()) if margins.size else 1.0
    kkt = float(arrays.get("W_mm_kkt_residual", np.nan))
    if abs(low - 1.0) > MARGIN_TOLERANCE or not kkt <= KKT_TOLERANCE:
        raise FileContractError(
            f"{path}: W_mm is not the max-margin solution of its data (smallest margin "
            f"{low:.6g}, should be 1; KKT residual {kkt:.3g}, should be <= {KKT_TOLERANCE:g}); "
            f"{rebuild_hint(path)}"
        )
    return arrays


def metrics_table(
    experiment: str, optimizer: str, seed: int, iterations: np.ndarray, metrics: dict
) -> pa.Table:
    """Long-format table of one run; rows with undefined values (NaN) are left out.

    A metric with a single value (a run summary such as a first crossing) is written at the
    last iteration.
    """
    import pyarrow as pa

    names = sorted(metrics)
    iterations = np.asarray(iterations, dtype=np.int64)
    columns = [np.asarray(metrics[m], dtype=np.float64).reshape(-1) for m in names]
    values = np.concatenate(columns)
    its = np.concatenate([iterations if len(c) > 1 else iterations[-1:] for c in columns])
    metric = np.repeat(np.array(names, dtype=object), [len(c) for c in columns])
    keep = ~np.isnan(values)
    count = int(keep.sum())
    columns = {
        "experiment": _strings([experiment] * count),
        "optimizer": _strings([optimizer] * count),
        "seed": _numbers(np.full(count, seed, dtype=np.int64)),
        "iteration": _numbers(its[keep]),
        "metric": _strings(metric[keep]),
        "value": _numbers(values[keep]),
    }
    return pa.Table.from_arrays(list(columns.values()), names=list(columns))


# Arrow arrays built from their buffers: pa.array() imports pandas (to check for a Series),
# about 0.3 s of CPU in every training job, which has no use for pandas.


def _numbers(values: np.ndarray):
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    kind = {np.dtype(np.int64): pa.int64(), np.dtype(np.float64): pa.float64()}[values.dtype]
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(values)])


def _strings(values) -> pa.Array:
    import pyarrow as pa

    encoded = [str(v).encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(v) for v in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers)


def _table_sha256(table: pa.Table) -> str:
    """sha256 of a table's column names, types and values and of its schema metadata (but
    the checksum's own): the same however the columns are split into chunks."""
    import pyarrow as pa

    digest = hashlib.sha256()
    metadata = {k: v for k, v in (table.schema.metadata or {}).items() if k != CHECKSUM_META}
    for key in sorted(metadata):
        digest.update(len(key).to_bytes(8, "little") + key)
        digest.update(len(metadata[key]).to_bytes(8, "little") + metadata[key])
    for field, column in zip(table.schema, table.columns, strict=True):
        digest.update(f"{field.name}:{field.type}:{len(column)}:{column.null_count};".encode())
        parts = hashlib.sha256()  # a string column's lengths go here, its bytes to `digest`
        for chunk in column.chunks:
            if pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type):
                if not chunk.null_count:
                    offsets, data = _string_buffers(chunk)
                    parts.update(np.diff(offsets).astype(np.int64).data)
                    digest.update(data)
                    continue
            elif _is_number(chunk.type) and not chunk.null_count:
                digest.update(_value_bytes(chunk))
                continue
            elif pa.types.is_primitive(chunk.type) and not chunk.null_count:
                digest.update(chunk.to_numpy(zero_copy_only=False).data)
                continue
            # nulls, or a type without flat buffers (none in our tables): the values' text
            digest.update(repr(chunk.to_pylist()).encode())
        digest.update(parts.digest())
    return digest.hexdigest()


def _is_number(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)


def _value_bytes(chunk):
    """A numeric or boolean array's values laid out as chunk.to_numpy() lays them out (what
    the checksum hashes), read from its buffers: to_numpy imports pandas, about 1 s of CPU
    in every training job (benchmarks/checksums.py)."""
    data = chunk.buffers()[1]
    if data is None or not len(chunk):
        return b""
    if chunk.type.bit_width == 1:  # booleans: a bit each in Arrow, a byte each in numpy
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")
        return bits[chunk.offset : chunk.offset + len(chunk)].astype(np.bool_).data
    size = chunk.type.bit_width // 8
    return memoryview(data)[chunk.offset * size : (chunk.offset + len(chunk)) * size]


def _string_buffers(chunk) -> tuple[np.ndarray, memoryview]:
    """A string array's offsets (of its own slice) and the bytes they span."""
    _, offsets_buffer, data_buffer = chunk.buffers()
    width = np.int32 if chunk.type == "string" else np.int64  # large_string: 64-bit
    offsets = np.frombuffer(offsets_buffer, dtype=width)[
        chunk.offset : chunk.offset + len(chunk) + 1
    ]
    data = memoryview(data_buffer)[offsets[0] : offsets[-1]] if data_buffer else b""
    return offsets, data


def with_checksum(table: pa.Table) -> pa.Table:
    """`table` with the sha256 of its content in its metadata (save_table adds it)."""
    metadata = {**(table.schema.metadata or {}), CHECKSUM_META: _table_sha256(table).encode()}
    return table.replace_schema_metadata(metadata)


def save_table(path, table: pa.Table) -> None:
    """A table as Parquet, with the sha256 of its content that read_table checks."""
    import pyarrow.parquet as pq

    table = with_checksum(table)
    _write_with(path, lambda tmp: pq.write_table(table, tmp))


def _check_table_checksum(path, table: pa.Table) -> None:
    recorded = (table.schema.metadata or {}).get(CHECKSUM_META)
    if recorded is None:
        raise FileContractError(
            f"{path} records no checksum (written by an older attnbias or another program), "
            f"so an edit could not be told apart; {rebuild_hint(path)}"
        )
    if recorded.decode() != _table_sha256(table):
        raise _edited(path, "its values or metadata differ from what its job wrote")


def with_run_info(table: pa.Table, info: dict[str, str]) -> pa.Table:
    """`table` with `info` (the device a run trained on, torch's version) in its metadata.

    The figures' provenance reads it back with run_info; the table's rows are unchanged.
    """
    metadata = {**(table.schema.metadata or {}), RUN_INFO_KEY: _json(info)}
    return table.replace_schema_metadata(metadata)


def with_identity(table: pa.Table, ident: dict) -> pa.Table:
    """`table` with the file's identity in its metadata (read back by read_table)."""
    metadata = {**(table.schema.metadata or {}), IDENTITY_META: _json(ident)}
    return table.replace_schema_metadata(metadata)


def read_table(path, expect: dict | None = None) -> pa.Table:
    """A Parquet file, checked against the checksum its writer recorded and its identity
    against `expect` where given; an unreadable or edited file raises FileContractError
    naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, pa.ArrowException) as err:
        raise _unreadable(path, err) from None
    _check_table_checksum(path, table)
    metadata = table.schema.metadata or {}
    found = json.loads(metadata[IDENTITY_META]) if IDENTITY_META in metadata else None
    check_identity(path, found, expect)
    if expect is not None and {"experiment", "optimizer", "seed"} <= set(table.column_names):
        _check_rows(path, table, expect)
    return table


def _check_rows(path, table: pa.Table, expect: dict) -> None:
    """The rows of a run's table name the run its identity names."""
    for column in ("experiment", "optimizer", "seed"):
        if column not in expect:
            continue
        values = set(table.column(column).unique().to_pylist())
        if values - {expect[column]}:
            raise FileContractError(
                f"{path} holds rows of {column} {sorted(values)}, but its path calls for "
                f"{expect[column]}; {rebuild_hint(path)}"
            )


def run_info(path) -> dict[str, str]:
    """What with_run_info stored in a Parquet file (checked against its checksum, as every
    read); {} if the file holds nothing."""
    metadata = read_table(path).schema.metadata or {}
    return json.loads(metadata[RUN_INFO_KEY]) if RUN_INFO_KEY in metadata else {}


def concat_tables(paths, expect: list[dict] | None = None) -> pa.Table:
    """Concatenate per-run tables into one, in a stable row order.

    `expect`: each file's identity, in the order of `paths`. A run that appears twice is
    refused. Each run's metadata (with_run_info, identity) is dropped: it describes one run,
    not the whole.
    """
    import pyarrow as pa

    expect = [None] * len(paths) if expect is None else list(expect)
    if len(expect) != len(paths):
        raise ValueError(f"{len(paths)} run files but {len(expect)} identities")
    tables, seen = [], {}
    for path, ident in zip(paths, expect, strict=True):
        table = read_table(path, ident)
        keys = table.select(["experiment", "optimizer", "seed"]).to_pylist()
        for key in {tuple(k.values()) for k in keys}:
            if key in seen:
                raise FileContractError(
                    f"{path} and {seen[key]} both hold the run experiment {key[0]}, optimizer "
                    f"{key[1]}, seed {key[2]}; {rebuild_hint(path)}"
                )
            seen[key] = path
        tables.append(table.replace_schema_metadata())
    table = pa.concat_tables(tables)
    order = [(c, "ascending") for c in ("optimizer", "seed", "metric", "iteration")]
    return table.sort_by(order)


def W_mm_norm(svm_path, data: dict | None = None, expect: dict | None = None) -> float:
    """||W_mm||_F from an SVM file (checked against its data, where given)."""
    arrays = (
        load_svm(svm_path, data, expect)
        if data is not None
        else load_npz(svm_path, ("W_mm",), expect)
    )
    return float(np.linalg.norm(arrays["W_mm"]))


def save_text(path, text: str) -> None:
    _write_with(path, lambda tmp: Path(tmp).write_text(text))


JSON_CHECKSUM_KEY = "attnbias_sha256"  # a JSON record's sha256 of the rest, canonical form


def save_json(path, record: dict) -> None:
    """`record` as indented JSON, with the sha256 of its canonical form (load_json checks it)."""
    checked = {**record, JSON_CHECKSUM_KEY: hashlib.sha256(_json(record).encode()).hexdigest()}
    save_text(path, json.dumps(checked, indent=2, allow_nan=False) + "\n")


def load_json(path) -> dict:
    """A record save_json wrote, checked against its sha256: an edited, unreadable or
    unchecked file raises FileContractError naming it."""
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as err:
        raise _unreadable(path, err) from None
    recorded = record.pop(JSON_CHECKSUM_KEY, None) if isinstance(record, dict) else None
    if recorded is None:
        raise FileContractError(
            f"{path} records no checksum (written by an older attnbias or another program), "
            f"so an edit could not be told apart; {rebuild_hint(path)}"
        )
    if recorded != hashlib.sha256(_json(record).encode()).hexdigest():
        raise _edited(path, "its content differs from what its job wrote")
    return record


def save_frame(path, frame) -> None:
    """A pandas DataFrame as Parquet (with its checksum: read it back with load_frame)."""
    import pyarrow as pa

    save_table(path, pa.Table.from_pandas(frame, preserve_index=False))


def load_frame(path, expect: dict | None = None):
    """A Parquet file that save_table or save_frame wrote, checked, as a pandas DataFrame."""
    return read_table(path, expect).to_pandas()


def save_csv(path, frame) -> None:
    _write_with(path, lambda tmp: frame.to_csv(tmp, index=False))


def load_metrics(path, expect: dict | None = None):
    """The aggregate table as a pandas DataFrame (its identity checked where `expect`)."""
    return load_frame(path, expect)
