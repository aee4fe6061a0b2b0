"""The file contract between the pipeline's stages. Every write is atomic.

  results/data/{experiment}/seed{seed}.npz      X (n,T,d), y (n,), opt (n,), W0 (d,d), [u (d,)]
  results/svm/{experiment}/seed{seed}.npz       W_mm (d,d), [u_mm (d,)], n_support, kkt_residual
  results/train/{experiment}/{optimizer}/seed{seed}.parquet   metrics, long format
  results/train/{experiment}/{optimizer}/seed{seed}.final.npz W (d,d), u (d,)
  results/{experiment}/metrics.parquet          all optimizers and seeds, long format

Long format: one row per (experiment, optimizer, seed, iteration, metric) with its value.
A file is written beside its target and renamed into place, so a killed job never leaves
a half-written file that a later run would take for a result.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pyarrow is imported where a table is read or written: a data or SVM
    import pyarrow as pa  # job (npz only) then never pays its ~0.2 s import

METRIC_COLUMNS = ("experiment", "optimizer", "seed", "iteration", "metric", "value")
RUN_INFO_KEY = b"attnbias.run"  # Parquet schema metadata: where a run ran (with_run_info)
DATA_KEYS = ("X", "y", "opt", "W0")


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


def save_npz(path, arrays: dict[str, np.ndarray]) -> None:
    def write(tmp):
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)

    _write_with(path, write)


def load_npz(path, required: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    with np.load(path) as f:
        arrays = {key: f[key] for key in f.files}
    missing = [key for key in required if key not in arrays]
    if missing:
        raise KeyError(f"{path} lacks {missing}; it holds {sorted(arrays)}")
    return arrays


def load_data(path) -> dict[str, np.ndarray]:
    return load_npz(path, DATA_KEYS)


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


def save_table(path, table: pa.Table) -> None:
    import pyarrow.parquet as pq

    _write_with(path, lambda tmp: pq.write_table(table, tmp))


def with_run_info(table: pa.Table, info: dict[str, str]) -> pa.Table:
    """`table` with `info` (the device a run trained on, torch's version) in its metadata.

    The figures' provenance reads it back with run_info; the table's rows are unchanged.
    """
    metadata = {**(table.schema.metadata or {}), RUN_INFO_KEY: json.dumps(info, sort_keys=True)}
    return table.replace_schema_metadata(metadata)


def run_info(path) -> dict[str, str]:
    """What with_run_info stored in a Parquet file; {} if the file holds nothing."""
    import pyarrow.parquet as pq

    metadata = pq.read_schema(path).metadata or {}
    return json.loads(metadata[RUN_INFO_KEY]) if RUN_INFO_KEY in metadata else {}


def concat_tables(paths) -> pa.Table:
    """Concatenate per-run tables into one, in a stable row order.

    Each run's metadata (with_run_info) is dropped: it describes one run, not the whole.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.concat_tables([pq.read_table(p).replace_schema_metadata() for p in paths])
    order = [(c, "ascending") for c in ("optimizer", "seed", "metric", "iteration")]
    return table.sort_by(order)


def W_mm_norm(svm_path) -> float:
    """||W_mm||_F from an SVM file."""
    return float(np.linalg.norm(load_npz(svm_path, ("W_mm",))["W_mm"]))


def save_text(path, text: str) -> None:
    _write_with(path, lambda tmp: Path(tmp).write_text(text))


def save_frame(path, frame) -> None:
    """A pandas DataFrame as Parquet."""
    _write_with(path, lambda tmp: frame.to_parquet(tmp, index=False))


def save_csv(path, frame) -> None:
    _write_with(path, lambda tmp: frame.to_csv(tmp, index=False))


def load_metrics(path):
    """The aggregate table as a pandas DataFrame."""
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pandas()
