"""MNLI for the BERT figures, from where users keep it.

Layouts under the data root (config key `real_data.data_root`), either the official
MultiNLI 1.0 zip, unzipped: `multinli_1.0/multinli_1.0_{train,dev_matched}.jsonl`, or GLUE's
copy: `MNLI/{train,dev_matched}.tsv` (the official one wins where both are present).
Split "test" is the matched validation set, as usual for MNLI.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from attnbias.data.missing import MissingDataError
from attnbias.realdata.errors import is_fixture
from attnbias.realdata.text import DATA_KEY, TextSplit, data_root

MNLI_LABELS = ("entailment", "neutral", "contradiction")  # -> 0, 1, 2
MNLI_SPLITS = ("train", "test")
# layout -> (folder under the data root, split -> file); the official layout is tried first
_MNLI_FILES = {
    "jsonl": (
        "multinli_1.0",
        {"train": "multinli_1.0_train.jsonl", "test": "multinli_1.0_dev_matched.jsonl"},
    ),
    "tsv": ("MNLI", {"train": "train.tsv", "test": "dev_matched.tsv"}),
}
_MNLI_HOW = (
    "Download the MultiNLI 1.0 zip, https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip, "
    "and unzip it into the data root (giving multinli_1.0/multinli_1.0_train.jsonl and "
    "multinli_1.0/multinli_1.0_dev_matched.jsonl), or GLUE's MNLI, "
    "https://dl.fbaipublicfiles.com/glue/data/MNLI.zip (giving MNLI/train.tsv and "
    "MNLI/dev_matched.tsv)."
)


def _mnli_layout(root: Path) -> tuple[str, Path] | None:
    """The first layout whose two files both exist, with its folder."""
    for layout, (folder, files) in _MNLI_FILES.items():
        if all((root / folder / f).is_file() for f in files.values()):
            return layout, root / folder
    return None


def mnli_source(root: str | Path | None) -> dict:
    """Where MNLI is under `root`, checked cheaply (files exist; nothing is read): path (the
    dataset folder), fixture (written by the test suite), files, layout ("jsonl" or "tsv").
    Raises MissingDataError naming the dataset, the config key and how to get it."""
    base = data_root(root, "MNLI", _MNLI_HOW)
    found = _mnli_layout(base)
    if found is None:
        expected = [str(base / d / f) for d, files in _MNLI_FILES.values() for f in files.values()]
        raise MissingDataError(
            "MNLI", base, DATA_KEY, f"{_MNLI_HOW} Looked for: {', '.join(expected)}."
        )
    layout, folder = found
    files = [str(folder / f) for f in _MNLI_FILES[layout][1].values()]
    return {"path": str(folder), "fixture": is_fixture(folder), "files": files, "layout": layout}


MNLI_FIELDS = ("sentence1", "sentence2", "gold_label")


class MNLIFormatError(ValueError):
    """A line of an MNLI file that is not what the format says; names the file and line."""

    def __init__(self, path, lineno: int, why: str):
        super().__init__(f"{path}:{lineno}: {why}")


def _utf8_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, decoded one by one so a bad byte names its line."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise MNLIFormatError(path, lineno, f"not UTF-8 ({err.reason})") from None


def _mnli_jsonl(path: Path) -> Iterator[tuple[int, str, str, str]]:
    """(line number, premise, hypothesis, gold label) of each line, one JSON object each."""
    for lineno, line in _utf8_lines(path):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            why = f"not a JSON object ({err.msg}, column {err.colno}); a cut or damaged file?"
            raise MNLIFormatError(path, lineno, why) from None
        if not isinstance(row, dict):
            raise MNLIFormatError(path, lineno, f"a JSON {type(row).__name__}, not an object")
        missing = [key for key in MNLI_FIELDS if key not in row]
        if missing:
            raise MNLIFormatError(path, lineno, f"no {', '.join(missing)}")
        values = [row[key] for key in MNLI_FIELDS]
        if not all(isinstance(v, str) for v in values):
            raise MNLIFormatError(path, lineno, f"{MNLI_FIELDS} must be strings: {values}")
        yield lineno, *values


def _mnli_tsv(path: Path) -> Iterator[tuple[int, str, str, str]]:
    # GLUE's files are unquoted: sentences hold bare '"' characters, so csv must not
    # interpret quotes (pandas' default reader silently merges lines here); one line, one row
    lines = _utf8_lines(path)
    first = next(lines, None)
    if first is None:
        raise MNLIFormatError(path, 1, "the file is empty: no header")
    header = next(csv.reader([first[1]], delimiter="\t", quoting=csv.QUOTE_NONE))
    try:
        columns = [header.index(c) for c in MNLI_FIELDS]
    except ValueError:
        why = f"the header lacks sentence1, sentence2 or gold_label: {header}"
        raise MNLIFormatError(path, 1, why) from None
    for lineno, line in lines:
        row = next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(row) != len(header):
            raise MNLIFormatError(
                path, lineno, f"{len(row)} fields where the header has {len(header)}"
            )
        yield lineno, *(row[i] for i in columns)


def load_mnli(root: str | Path | None, split: str) -> TextSplit:
    """MNLI's "train" or "test" (matched validation) split from either layout under `root`.

    Labels entailment/neutral/contradiction -> 0/1/2; rows without a gold label ('-', no
    annotator majority) are dropped and counted in `n_dropped`.
    """
    if split not in MNLI_SPLITS:
        raise ValueError(f"MNLI split {split!r}: choose one of {MNLI_SPLITS}")
    source = mnli_source(root)
    layout = source["layout"]
    path = Path(source["path"]) / _MNLI_FILES[layout][1][split]
    rows = _mnli_jsonl(path) if layout == "jsonl" else _mnli_tsv(path)
    index = {name: i for i, name in enumerate(MNLI_LABELS)}
    premise, hypothesis, labels, dropped = [], [], [], 0
    for lineno, s1, s2, gold in rows:
        if gold == "-":
            dropped += 1
            continue
        if gold not in index:
            why = f"unknown gold label {gold!r}; expected {MNLI_LABELS} or '-'"
            raise MNLIFormatError(path, lineno, why)
        premise.append(s1)
        hypothesis.append(s2)
        labels.append(index[gold])
    if not labels:
        raise ValueError(f"{path}: no example with a gold label; an empty or cut file?")
    return TextSplit(
        texts=premise,
        pairs=hypothesis,
        labels=np.asarray(labels, dtype=np.int64),
        n_dropped=dropped,
        path=str(path),
        fixture=source["fixture"],
    )
