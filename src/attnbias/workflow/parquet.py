"""The Parquet codec of the file contract (run, aggregate and other tables): long-format
tables written with their identity, the record of where a run trained and the sha256 of
their content in the schema metadata, read back checked. See docs/file-contract.md."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import numpy as np

from attnbias.workflow.store import (
    FileContractError,
    canonical_json,
    check_identity,
    edited,
    rebuild_hint,
    unchecked,
    unreadable,
    write_with,
)

if TYPE_CHECKING:  # pyarrow is imported where a table is read or written: a data or SVM
    import pyarrow as pa  # job (npz only) then never pays its ~0.2 s import

METRIC_COLUMNS = ("experiment", "optimizer", "seed", "iteration", "metric", "value")
RUN_INFO_KEY = b"attnbias.run"  # Parquet schema metadata: where a run ran (with_run_info)
IDENTITY_META = b"attnbias.identity"  # Parquet schema metadata: the file's identity as JSON
CHECKSUM_META = b"attnbias.sha256"  # Parquet schema metadata: sha256 of columns and metadata


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
    write_with(path, lambda tmp: pq.write_table(table, tmp))


def _check_table_checksum(path, table: pa.Table) -> None:
    recorded = (table.schema.metadata or {}).get(CHECKSUM_META)
    if recorded is None:
        raise unchecked(path)
    if recorded.decode() != _table_sha256(table):
        raise edited(path, "its values or metadata differ from what its job wrote")


def with_run_info(table: pa.Table, info: dict[str, str]) -> pa.Table:
    """`table` with `info` (the device a run trained on, torch's version) in its metadata.

    The figures' provenance reads it back with run_info; the table's rows are unchanged.
    """
    metadata = {**(table.schema.metadata or {}), RUN_INFO_KEY: canonical_json(info)}
    return table.replace_schema_metadata(metadata)


def with_identity(table: pa.Table, ident: dict) -> pa.Table:
    """`table` with the file's identity in its metadata (read back by read_table)."""
    metadata = {**(table.schema.metadata or {}), IDENTITY_META: canonical_json(ident)}
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
        raise unreadable(path, err) from None
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


def save_frame(path, frame) -> None:
    """A pandas DataFrame as Parquet (with its checksum: read it back with load_frame)."""
    import pyarrow as pa

    save_table(path, pa.Table.from_pandas(frame, preserve_index=False))


def load_frame(path, expect: dict | None = None):
    """A Parquet file that save_table or save_frame wrote, checked, as a pandas DataFrame."""
    return read_table(path, expect).to_pandas()


def load_metrics(path, expect: dict | None = None):
    """The aggregate table as a pandas DataFrame (its identity checked where `expect`)."""
    return load_frame(path, expect)
