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
from pathlib import Path

from attnbias.workflow.npz import (  # noqa: F401  (the codecs, as the scripts name them)
    CHECKSUM_KEY,
    DATA_KEYS,
    HYPOTHESES_KEY,
    IDENTITY_KEY,
    array_sha256,
    load_data,
    load_hypotheses,
    load_npz,
    load_svm,
    save_npz,
    seed_hypotheses,
)
from attnbias.workflow.parquet import (  # noqa: F401
    CHECKSUM_META,
    IDENTITY_META,
    METRIC_COLUMNS,
    RUN_INFO_KEY,
    concat_tables,
    load_frame,
    load_metrics,
    metrics_table,
    read_table,
    run_info,
    save_frame,
    save_table,
    with_checksum,
    with_identity,
    with_run_info,
)
from attnbias.workflow.store import (  # noqa: F401
    FileContractError,
    atomic_path,
    canonical_json,
    check_identity,
    config_sha256,
    edited,
    identity,
    rebuild_hint,
    unchecked,
    unreadable,
    write_with,
)


def save_text(path, text: str) -> None:
    write_with(path, lambda tmp: Path(tmp).write_text(text))


JSON_CHECKSUM_KEY = "attnbias_sha256"  # a JSON record's sha256 of the rest, canonical form


def save_json(path, record: dict) -> None:
    """`record` as indented JSON, with the sha256 of its canonical form (load_json checks it)."""
    checked = {
        **record,
        JSON_CHECKSUM_KEY: hashlib.sha256(canonical_json(record).encode()).hexdigest(),
    }
    save_text(path, json.dumps(checked, indent=2, allow_nan=False) + "\n")


def load_json(path) -> dict:
    """A record save_json wrote, checked against its sha256: an edited, unreadable or
    unchecked file raises FileContractError naming it."""
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as err:
        raise unreadable(path, err) from None
    recorded = record.pop(JSON_CHECKSUM_KEY, None) if isinstance(record, dict) else None
    if recorded is None:
        raise unchecked(path)
    if recorded != hashlib.sha256(canonical_json(record).encode()).hexdigest():
        raise edited(path, "its content differs from what its job wrote")
    return record


def save_csv(path, frame) -> None:
    write_with(path, lambda tmp: frame.to_csv(tmp, index=False))
