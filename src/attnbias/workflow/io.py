"""The file contract between the pipeline's stages (docs/file-contract.md). Every write is
atomic.

  results/data/{experiment}.npz                  per seed s: seed{s}/X (n,T,d), y (n,), opt (n,),
                                                 W0 (d,d), [u (d,)]
  results/svm/{experiment}.npz                   per seed s: seed{s}/W_mm (d,d), [u_mm (d,)], ...
  results/svm_geometry/{experiment}.npz          per seed s: seed{s}/W_<norm> (d,d), [u_<norm>], ...
  results/train/{experiment}/{optimizer}.parquet every seed's metrics, long format
  results/train/{experiment}/{optimizer}.final.npz  per seed s: seed{s}/W (d,d), u (d,)
  results/{experiment}/metrics.parquet           all optimizers and seeds, long format, and
                                                 the merged record of where its runs trained

Long format: one row per (experiment, optimizer, seed, iteration, metric) with its value.
A file is written beside its target and renamed into place (attnbias.workflow.store), so a
killed job never leaves a half-written file that a later run would take for a result.

Every file knows what it is: its identity (kind, experiment, seed, optimizer where it has
one, and the sha256 of the config values that produced it; see `identity`), one per seed
in a file with a seed axis, is stored in it (.npz: the entry `attnbias_identity` of each
seed's group; Parquet: the schema metadata `attnbias.identity`, a list of each seed's), and
every reader checks it against what its own path and the config say (`expect=`), so a file
copied or left over from another experiment, seed count or config is refused by path.

Every file also holds the sha256 of its content, recorded by the writer (.npz: the entry
`attnbias_sha256` of each seed's group, one digest per entry; Parquet: the schema metadata
`attnbias.sha256`, of each seed's rows and of the metadata), and every reader checks it: a
file edited after its job wrote it is refused by path and seed, with the command that
rebuilds it. The codecs: attnbias.workflow.npz, .parquet, and this module's JSON and text.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from attnbias.workflow.store import (
    FileContractError,
    canonical_json,
    edited,
    open_regular,
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
        with open_regular(path) as fh:  # a FIFO or device refused unopened
            record = json.loads(fh.read())
    except (FileNotFoundError, FileContractError):
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
