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
    check_regular,
    check_seed_identities,
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
RUNS_META = b"attnbias.runs"  # an aggregate's metadata: each run's RUN_INFO_KEY, merged
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


def _seed_rows(table: pa.Table) -> dict[int, pa.Table]:
    """{seed: that seed's rows, without the file's metadata}, seeds in order. The rows are
    picked by index from the seed column's buffers: pyarrow's filter on a comparison
    imports pandas, about 0.3 s of CPU in every training job."""
    rows = table.replace_schema_metadata()
    column = table.column("seed")
    seeds = np.concatenate(
        [np.frombuffer(_value_bytes(chunk), dtype=np.int64) for chunk in column.chunks]
        or [np.zeros(0, dtype=np.int64)]
    )
    return {
        int(seed): rows.take(_numbers(np.flatnonzero(seeds == seed))) for seed in np.unique(seeds)
    }


def _seed_sha256s(table: pa.Table) -> dict:
    """A table with a seed axis' checksums: of its columns and other metadata, and of each
    seed's rows, so that an edit names the seed it touched."""
    rows = _seed_rows(table)
    return {
        "metadata": _table_sha256(table.slice(0, 0)),
        "seeds": {str(seed): _table_sha256(part) for seed, part in rows.items()},
    }


def with_checksum(table: pa.Table, by_seed: bool = False) -> pa.Table:
    """`table` with the sha256 of its content in its metadata (save_table adds it); with
    `by_seed`, one per seed's rows and one of the metadata (a run table of every seed)."""
    digest = canonical_json(_seed_sha256s(table)) if by_seed else _table_sha256(table)
    metadata = {**(table.schema.metadata or {}), CHECKSUM_META: digest.encode()}
    return table.replace_schema_metadata(metadata)


def save_table(path, table: pa.Table, by_seed: bool = False) -> None:
    """A table as Parquet, with the sha256 of its content (`by_seed`: of each seed's rows)
    that read_table checks."""
    import pyarrow.parquet as pq

    table = with_checksum(table, by_seed)
    write_with(path, lambda tmp: pq.write_table(table, tmp))


def _check_table_checksum(path, table: pa.Table) -> None:
    recorded = (table.schema.metadata or {}).get(CHECKSUM_META)
    if recorded is None:
        raise unchecked(path)
    if not recorded.startswith(b"{"):  # one digest of the whole table
        if recorded.decode() != _table_sha256(table):
            raise edited(path, "its values or metadata differ from what its job wrote")
        return
    try:
        recorded = json.loads(recorded)
        seeds = recorded["seeds"]
    except (ValueError, KeyError, TypeError):
        raise edited(path, "its checksum is not the JSON its job wrote") from None
    found = _seed_sha256s(table)
    if recorded.get("metadata") != found["metadata"]:
        raise edited(path, "its columns or metadata differ from what its job wrote")
    for seed, digest in found["seeds"].items():
        if seed not in seeds:
            raise edited(path, f"it holds rows of seed {seed}, which its job did not write")
        if seeds[seed] != digest:
            raise edited(path, f"the rows of seed {seed} differ from what its job wrote")
    missing = sorted(set(seeds) - set(found["seeds"]), key=int)
    if missing:
        raise edited(path, f"it lacks the rows of seeds {missing}, which its job wrote")


def with_run_info(table: pa.Table, info: dict[str, str]) -> pa.Table:
    """`table` with `info` (the device a run trained on, torch's version) in its metadata.

    The figures' provenance reads it back with run_info; the table's rows are unchanged.
    """
    metadata = {**(table.schema.metadata or {}), RUN_INFO_KEY: canonical_json(info)}
    return table.replace_schema_metadata(metadata)


def with_identity(table: pa.Table, ident: dict | list[dict]) -> pa.Table:
    """`table` with the file's identity in its metadata (read back by read_table): a dict,
    or the identity of each seed, in seed order, for a run table of every seed."""
    metadata = {**(table.schema.metadata or {}), IDENTITY_META: canonical_json(ident)}
    return table.replace_schema_metadata(metadata)


def read_table(path, expect: dict | list[dict] | None = None) -> pa.Table:
    """A Parquet file, checked against the checksum its writer recorded and its identity
    against `expect` where given (a list: each seed's, in seed order); an unreadable or
    edited file raises FileContractError naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # a FIFO or device refused unopened; pyarrow opens the path itself (read through a
        # Python file object, its threads could abort the interpreter at exit)
        table = pq.read_table(check_regular(path))
    except (FileNotFoundError, FileContractError):
        raise
    except (OSError, ValueError, pa.ArrowException) as err:
        raise unreadable(path, err) from None
    _check_table_checksum(path, table)
    metadata = table.schema.metadata or {}
    found = json.loads(metadata[IDENTITY_META]) if IDENTITY_META in metadata else None
    if isinstance(expect, list):
        check_seed_identities(path, _by_seed(path, found), expect)
    else:
        check_identity(path, found, expect)
    if expect is not None and {"experiment", "optimizer", "seed"} <= set(table.column_names):
        _check_rows(path, table, expect)
    return table


def _by_seed(path, found) -> dict[int, dict]:
    """The identities a run table of every seed stores (a list), by seed."""
    if found is not None and not isinstance(found, list):
        raise FileContractError(
            f"{path} holds one identity, not one per seed (written by an older attnbias, "
            f"before a run table held every seed); {rebuild_hint(path)}"
        )
    return {ident.get("seed"): ident for ident in found or []}


def _check_rows(path, table: pa.Table, expect: dict | list[dict]) -> None:
    """The rows of a run's table name the run (or the seeds) its identity names."""
    seeds = [e["seed"] for e in expect] if isinstance(expect, list) else None
    first = expect[0] if isinstance(expect, list) else expect
    for column in ("experiment", "optimizer", "seed"):
        if column not in first:
            continue
        allowed = set(seeds) if column == "seed" and seeds is not None else {first[column]}
        values = set(table.column(column).unique().to_pylist())
        if values - allowed:
            raise FileContractError(
                f"{path} holds rows of {column} {sorted(values)}, but its path calls for "
                f"{', '.join(map(str, sorted(allowed)))}; {rebuild_hint(path)}"
            )


def run_info(path) -> dict[str, str]:
    """What with_run_info stored in a Parquet file (checked against its checksum, as every
    read); {} if the file holds nothing."""
    return _run_info(read_table(path))


def _run_info(table: pa.Table) -> dict[str, str]:
    metadata = table.schema.metadata or {}
    return json.loads(metadata[RUN_INFO_KEY]) if RUN_INFO_KEY in metadata else {}


def run_records(path) -> list[dict]:
    """Where the runs of a table trained: an aggregate's record of its runs (RUNS_META:
    one entry per optimizer and seed), else the table's own run info as one entry."""
    metadata = read_table(path).schema.metadata or {}
    if RUNS_META in metadata:
        return json.loads(metadata[RUNS_META])
    return [json.loads(metadata[RUN_INFO_KEY]) if RUN_INFO_KEY in metadata else {}]


def concat_tables(paths, expect: list | None = None) -> pa.Table:
    """Concatenate run tables into one, in a stable row order, with the merged record of
    where its runs trained (RUNS_META: each run's optimizer, seed and with_run_info).

    `expect`: each file's identity (a list of each seed's, for a table of every seed), in
    the order of `paths`. A run that appears twice is refused. The files' own metadata
    (run info, identity) is dropped from the rows' table: it describes their runs, which
    the merged record names.
    """
    import pyarrow as pa

    expect = [None] * len(paths) if expect is None else list(expect)
    if len(expect) != len(paths):
        raise ValueError(f"{len(paths)} run files but {len(expect)} identities")
    tables, seen, records = [], {}, []
    for path, ident in zip(paths, expect, strict=True):
        table = read_table(path, ident)
        keys = table.select(["experiment", "optimizer", "seed"]).to_pylist()
        info = _run_info(table)
        for key in sorted({tuple(k.values()) for k in keys}):
            if key in seen:
                raise FileContractError(
                    f"{path} and {seen[key]} both hold the run experiment {key[0]}, optimizer "
                    f"{key[1]}, seed {key[2]}; {rebuild_hint(path)}"
                )
            seen[key] = path
            records.append({**info, "optimizer": key[1], "seed": key[2]})
        tables.append(table.replace_schema_metadata())
    table = pa.concat_tables(tables)
    order = [(c, "ascending") for c in ("optimizer", "seed", "metric", "iteration")]
    records.sort(key=lambda r: (r["optimizer"], r["seed"]))
    return table.sort_by(order).replace_schema_metadata({RUNS_META: canonical_json(records)})


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
