"""Run tables (attnbias.workflow.parquet): checksums independent of chunks
and layout, written without pandas.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from attnbias.workflow import parquet, store


def test_metrics_table_without_pandas_equals_pa_table():
    """parquet.metrics_table builds its arrays from buffers (pa.array imports pandas): the same
    table as pa.table would give, and no pandas imported."""
    code = """
import sys
import numpy as np
import pyarrow as pa
from attnbias.workflow import parquet
metrics = {"b": np.array([1.0, np.nan, 3.0]), "a": np.array([7.0]), "c": np.array([0.5, 1, 2])}
table = parquet.metrics_table("fig2", "ngd-mom", 3, np.array([0, 5, 10]), metrics)
assert "pandas" not in sys.modules
ref = pa.table({
    "experiment": pa.array(["fig2"] * 6, pa.string()),
    "optimizer": pa.array(["ngd-mom"] * 6, pa.string()),
    "seed": pa.array(np.full(6, 3, dtype=np.int64)),
    "iteration": pa.array(np.array([10, 0, 10, 0, 5, 10])),
    "metric": pa.array(["a", "b", "b", "c", "c", "c"], pa.string()),
    "value": pa.array(np.array([7.0, 1.0, 3.0, 0.5, 1.0, 2.0])),
})
assert table.equals(ref) and table.schema == ref.schema, (table, ref)
"""
    subprocess.run([sys.executable, "-c", code], check=True)


CONFIG = {"lr": 0.1}


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


def test_a_table_checksum_does_not_depend_on_its_chunks(tmp_path):
    table = _run_table().combine_chunks()
    chunked = pa.concat_tables([table.slice(0, 2), table.slice(2)])
    assert chunked.column(0).num_chunks == 2
    for by_seed in (False, True):  # one digest; one per seed, a seed across two chunks
        path, whole = tmp_path / f"chunked-{by_seed}.parquet", tmp_path / f"whole-{by_seed}.parquet"
        parquet.save_table(path, chunked, by_seed=by_seed)
        parquet.save_table(whole, table, by_seed=by_seed)
        assert parquet.read_table(path).equals(table)
        digests = [pq.read_schema(p).metadata[parquet.CHECKSUM_META] for p in (path, whole)]
        assert digests[0] == digests[1]


def test_a_table_checksum_reads_numbers_as_numpy_lays_them_out():
    """The checksum hashes numeric and boolean columns from their Arrow buffers, giving the
    bytes that chunk.to_numpy() gives (what files written before hashed), also for a slice
    that starts inside a byte of booleans."""
    rng = np.random.default_rng(0)
    columns = {
        "f64": pa.array(rng.normal(size=21)),
        "i64": pa.array(rng.integers(-9, 9, size=21)),
        "i32": pa.array(rng.integers(-9, 9, size=21).astype(np.int32)),
        "bool": pa.array(rng.random(21) < 0.5),
    }
    for column in columns.values():
        for start, length in ((0, 21), (3, 11), (13, 0)):
            chunk = column.slice(start, length)
            want = chunk.to_numpy(zero_copy_only=False).tobytes()
            assert bytes(parquet._value_bytes(chunk)) == want, (chunk.type, start, length)
    # negative control: an edited value changes the bytes hashed
    edited = pa.array(np.r_[0.0, rng.normal(size=20)])
    assert bytes(parquet._value_bytes(edited)) != bytes(parquet._value_bytes(columns["f64"]))


def test_writing_a_run_table_imports_no_pandas(tmp_path):
    """A training job writes its tables without pandas (about 1 s of CPU per job); reading
    one (pyarrow.dataset) may import it."""
    code = f"""
import sys
import numpy as np
from attnbias.workflow import parquet
table = parquet.metrics_table("fig2", "gd", 0, np.array([0, 5]), {{"loss": np.array([1.0, 0.5])}})
table = parquet.with_run_info(table, {{"device": "cpu"}})
parquet.save_table({str(tmp_path / "run.parquet")!r}, table)
assert "pandas" not in sys.modules, "pandas was imported"
assert parquet.read_table({str(tmp_path / "run.parquet")!r}).equals(parquet.with_checksum(table))
"""
    subprocess.run([sys.executable, "-c", code], check=True)
