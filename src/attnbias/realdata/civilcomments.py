"""CivilComments in WILDS' release format, read and evaluated without the `wilds` package.

The data are WILDS' release, as its download unpacks it under the data root (config key
`real_data.data_root`): `civilcomments_v1.0/RELEASE_v1.0.txt` and
`civilcomments_v1.0/all_data_with_identities.csv`. This module reads the CSV as WILDS'
`CivilCommentsDataset` does (first column the index; label toxicity >= 0.5; the splits of
the `split` column, each in the file's order; metadata: the 8 identity and 7 auxiliary
attributes >= 0.5, the label, and whether the row is from the source split, train) and
computes WILDS' evaluation of that dataset:
  acc_avg  the accuracy over all rows;
  acc_wg   the worst accuracy over the groups (identity present, label) of its 8 identities,
           each identity grouped with the label as WILDS' CombinatorialGrouper does: the
           labels 0 .. (largest label in the whole file), an identity's groups only where
           some row of the file has it, and a group without rows in the evaluated split
           counts as accuracy 0 (as in WILDS).
tests/realdata/test_civilcomments.py compares these numbers with `wilds`' own where it can be
imported.
"""

from __future__ import annotations

import csv
import shutil
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from attnbias.data.missing import MissingDataError
from attnbias.realdata.errors import is_fixture
from attnbias.realdata.text import DATA_KEY, TextSplit, data_root

CIVIL_DIR = "civilcomments_v1.0"
CIVIL_FILES = ("RELEASE_v1.0.txt", "all_data_with_identities.csv")
CIVIL_SPLITS = ("train", "val", "test")
CIVIL_URL = (
    "https://worksheets.codalab.org/rest/bundles/0x8cd3de0634154aeaad2ee6eb96723c6e/contents/blob/"
)
_CIVIL_HOW = (
    f"Download the WILDS archive ({CIVIL_URL}, see https://wilds.stanford.edu/downloads) "
    "and unpack it into <data root>/civilcomments_v1.0/ (RELEASE_v1.0.txt and "
    "all_data_with_identities.csv), or set `real_data.download: true` on a machine with a "
    "network to fetch it (about 90 MB)."
)

# WILDS' metadata columns, in its order (METADATA_FIELDS)
IDENTITIES = (
    "male",
    "female",
    "LGBTQ",
    "christian",
    "muslim",
    "other_religions",
    "black",
    "white",
)
AUXILIARY = (
    "identity_any",
    "severe_toxicity",
    "obscene",
    "threat",
    "insult",
    "identity_attack",
    "sexual_explicit",
)
# WILDSDataset appends "from_source_domain": 1 on rows of the source split ("train")
METADATA_FIELDS = (*IDENTITIES, *AUXILIARY, "y", "from_source_domain")
SOURCE_SPLITS = ("train",)
THRESHOLD = 0.5  # a fraction of annotators at or above it: the attribute (or toxicity) holds


def civilcomments_source(root: str | Path | None) -> dict:
    """Where CivilComments is under `root`, checked cheaply (files exist; nothing is read):
    path, fixture, files, layout ("wilds"). Raises MissingDataError naming what is missing."""
    folder = data_root(root, "CivilComments (WILDS)", _CIVIL_HOW) / CIVIL_DIR
    missing = [f for f in CIVIL_FILES if not (folder / f).is_file()]
    if missing:
        raise MissingDataError(
            "CivilComments (WILDS)", folder, DATA_KEY, f"Missing {', '.join(missing)}. {_CIVIL_HOW}"
        )
    return {
        "path": str(folder),
        "fixture": is_fixture(folder),
        "files": [str(folder / f) for f in CIVIL_FILES],
        "layout": "wilds",
    }


def download_civilcomments(root: str | Path | None) -> Path:
    """Fetch WILDS' archive and unpack it into `<root>/civilcomments_v1.0/` (where it is not
    there yet); returns the folder. Needs a network."""
    base = data_root(root, "CivilComments (WILDS)", _CIVIL_HOW)
    folder = base / CIVIL_DIR
    if all((folder / f).is_file() for f in CIVIL_FILES):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as archive:
        with urllib.request.urlopen(CIVIL_URL, timeout=60) as response:
            shutil.copyfileobj(response, archive)
        archive.seek(0)
        with tarfile.open(fileobj=archive, mode="r:*") as tar:
            tar.extractall(folder, filter="data")
    civilcomments_source(base)  # the archive held what it should
    return folder


# WILDS' v1.0 release: 269,038 train + 45,180 val + 133,782 test rows (WILDS' paper, Table 1)
RELEASE_ROWS = 448_000
NUMERIC = ("toxicity", *IDENTITIES, *AUXILIARY)


class CivilCommentsFormatError(ValueError):
    """all_data_with_identities.csv is not WILDS' release; names the file (and the line)."""


def _check_records(path: Path) -> None:
    """Every record of the CSV has the header's number of fields and well-formed quoting
    (pandas would take a first row with one field too many as an index column and shift
    every column, and read a row cut short as NaN)."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise CivilCommentsFormatError(f"{path} is empty: no header")
            for record in reader:
                if len(record) != len(header):
                    raise CivilCommentsFormatError(
                        f"{path}:{reader.line_num}: {len(record)} fields where the header has "
                        f"{len(header)}; a damaged or cut file?"
                    )
        except (csv.Error, UnicodeDecodeError) as err:
            raise CivilCommentsFormatError(
                f"{path}:{reader.line_num}: not a CSV record ({err}); a damaged or cut file?"
            ) from None


def _read_csv(path: Path):
    import pandas as pd

    major = int(pd.__version__.split(".")[0])
    if major not in (2, 3):
        raise RuntimeError(
            f"reading CivilComments is tested with pandas 2 and 3, not {pd.__version__}"
        )
    _check_records(path)
    columns = pd.read_csv(path, nrows=0, index_col=0).columns
    absent = [c for c in ("comment_text", "split", *NUMERIC) if c not in columns]
    if absent:
        raise CivilCommentsFormatError(
            f"{path}: no column(s) {absent}; is this WILDS' CivilComments v1.0?"
        )
    # the schema: the text and split as strings (WILDS' reading of "NA" etc. kept), the
    # annotator fractions as floats; a value of another type fails here, naming the file
    schema = {"comment_text": object, "split": object, **dict.fromkeys(NUMERIC, "float64")}
    try:
        frame = pd.read_csv(path, index_col=0, dtype=schema, on_bad_lines="error")
    except (ValueError, pd.errors.ParserError) as err:
        raise CivilCommentsFormatError(f"{path}: {err}") from None
    _check_values(path, frame)
    return frame


def _check_values(path: Path, frame) -> None:
    """Split names known, no split empty, toxicity given, every fraction in [0, 1]."""
    splits = frame["split"]
    unknown = sorted(set(splits.dropna()) - set(CIVIL_SPLITS)) + (
        ["(empty)"] if splits.isna().any() else []
    )
    if unknown:
        raise CivilCommentsFormatError(
            f"{path}: split values {unknown[:5]} are none of {CIVIL_SPLITS}"
        )
    counts = splits.value_counts()
    empty = [name for name in CIVIL_SPLITS if counts.get(name, 0) == 0]
    if empty:
        raise CivilCommentsFormatError(f"{path}: no row of the split(s) {empty}")
    if frame["toxicity"].isna().any():
        row = frame.index[frame["toxicity"].isna()][0]
        raise CivilCommentsFormatError(f"{path}: row {row} has no toxicity")
    values = frame[list(NUMERIC)]
    outside = values.notna() & ((values < 0) | (values > 1))
    if outside.any().any():
        column = outside.any().idxmax()
        raise CivilCommentsFormatError(
            f"{path}: column {column} holds values outside [0, 1] (fractions of annotators)"
        )


def _check_release_size(path: Path, rows: int) -> None:
    if rows != RELEASE_ROWS:
        raise CivilCommentsFormatError(
            f"{path}: {rows} rows, but WILDS' CivilComments v1.0 has {RELEASE_ROWS}; a cut or "
            "other file? (test fixtures, marked as such, are exempt)"
        )


class CivilComments:
    """WILDS' CivilComments: its splits as `TextSplit`s and WILDS' evaluation of them."""

    def __init__(self, path: str | Path, *, fixture: bool = False):
        self.path, self.fixture = str(path), fixture
        frame = _read_csv(Path(path) / "all_data_with_identities.csv")
        if not fixture:
            _check_release_size(Path(path) / "all_data_with_identities.csv", len(frame))
        # an empty comment reads back as NaN
        self.texts = [t if isinstance(t, str) else "" for t in frame["comment_text"]]
        self.labels = (frame["toxicity"].to_numpy(dtype=np.float64) >= THRESHOLD).astype(np.int64)
        attributes = frame[[*IDENTITIES, *AUXILIARY]].to_numpy(dtype=np.float64)
        # NaN (not annotated) is below any threshold
        self.splits = frame["split"].astype(object).to_numpy()
        source = np.isin(self.splits, SOURCE_SPLITS).astype(np.int64)
        self.metadata = np.column_stack(
            [(attributes >= THRESHOLD).astype(np.int64), self.labels, source]
        )
        # WILDS groups each identity with the label over the whole file (CombinatorialGrouper:
        # values 0 .. max): these are the (identity, label) groups its eval reports
        n_labels = int(self.labels.max()) + 1
        self.groups = [
            (i, name, label)
            for i, name in enumerate(IDENTITIES)
            if self.metadata[:, i].max() >= 1
            for label in range(n_labels)
        ]

    def split(self, name: str) -> TextSplit:
        """ "train", "val" or "test": texts, labels (toxicity >= 0.5) and WILDS' metadata."""
        if name not in CIVIL_SPLITS:
            raise ValueError(f"CivilComments split {name!r}: choose one of {CIVIL_SPLITS}")
        idx = np.flatnonzero(self.splits == name)
        return TextSplit(
            texts=[self.texts[i] for i in idx],
            pairs=None,
            labels=self.labels[idx],
            metadata=self.metadata[idx],
            path=self.path,
            fixture=self.fixture,
        )

    def evaluate(self, y_pred, split: TextSplit) -> tuple[dict[str, float], str]:
        """WILDS' `CivilCommentsDataset.eval` on predictions for every row of `split`, in order.

        y_pred: (n,) predicted labels, or (n, 2) logits (argmax taken).
        Returns (results, summary): results holds "acc_avg" (accuracy), "acc_wg" (worst-group
        accuracy) and each group's accuracy and count under WILDS' names
        ("acc_y:0_male:1", "count_y:0_male:1"); summary is a printout like WILDS'.
        """
        y_pred = np.asarray(y_pred.cpu() if isinstance(y_pred, torch.Tensor) else y_pred)
        if y_pred.ndim == 2:
            y_pred = y_pred.argmax(axis=1)
        if len(y_pred) != len(split):
            raise ValueError(f"{len(y_pred)} predictions for a split of {len(split)} rows")
        correct = (y_pred == split.labels).astype(np.float64)
        results = {"acc_avg": float(correct.mean()) if len(correct) else 0.0}
        lines = [f"Average acc: {results['acc_avg']:.3f}"]
        worst = None
        for column, name, label in self.groups:
            members = (split.metadata[:, column] == 1) & (split.labels == label)
            count = int(members.sum())
            accuracy = float(correct[members].mean()) if count else 0.0  # WILDS: empty -> 0
            group = f"y:{label}_{name}:1"  # WILDS' group_field_str
            results[f"acc_{group}"], results[f"count_{group}"] = accuracy, float(count)
            worst = accuracy if worst is None else min(worst, accuracy)
            kind = "non_toxic" if label == 0 else "toxic"
            lines.append(f"  {name:20s} acc on {kind}: {accuracy:.3f} (n = {count:6d})")
        if worst is None:
            raise ValueError(f"{self.path}: no row has any identity; no worst group to report")
        results["acc_wg"] = worst
        lines.append(f"Worst-group acc: {worst:.3f}")
        return results, "\n".join(lines) + "\n"

    def evaluator(self, split: TextSplit) -> Callable[[torch.Tensor, torch.Tensor], dict]:
        """(predictions, labels) -> {"acc_avg", "acc_wg"} for `split`, checking that the labels
        are the split's own (the metadata rows must line up with the predictions)."""

        def evaluate(y_pred: torch.Tensor, y_true: torch.Tensor) -> dict[str, float]:
            if not np.array_equal(np.asarray(y_true.cpu()), split.labels):
                raise ValueError("labels differ from the split's: predictions out of order?")
            results, _ = self.evaluate(y_pred, split)
            return {"acc_avg": results["acc_avg"], "acc_wg": results["acc_wg"]}

        return evaluate


def load_civilcomments(root: str | Path | None, *, download: bool = False) -> CivilComments:
    """CivilComments from `<root>/civilcomments_v1.0/`. With download=False a missing folder
    raises MissingDataError; with download=True it is fetched first (needs a network)."""
    if download:
        download_civilcomments(root)
    source = civilcomments_source(root)
    return CivilComments(source["path"], fixture=source["fixture"])
