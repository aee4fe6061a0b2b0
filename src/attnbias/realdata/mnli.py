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

from attnbias.realdata.errors import MissingDataError, is_fixture
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


def _mnli_jsonl(path: Path) -> Iterator[tuple[str, str, str]]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                yield row["sentence1"], row["sentence2"], row["gold_label"]


def _mnli_tsv(path: Path) -> Iterator[tuple[str, str, str]]:
    # GLUE's files are unquoted: sentences hold bare '"' characters, so csv must not
    # interpret quotes (pandas' default reader silently merges lines here).
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        try:
            i1, i2, il = (header.index(c) for c in ("sentence1", "sentence2", "gold_label"))
        except ValueError:
            raise ValueError(
                f"{path}: header lacks sentence1, sentence2 or gold_label: {header}"
            ) from None
        for lineno, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise ValueError(
                    f"{path}:{lineno}: {len(row)} fields where the header has {len(header)}"
                )
            yield row[i1], row[i2], row[il]


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
    for s1, s2, gold in rows:
        if gold == "-":
            dropped += 1
            continue
        if gold not in index:
            raise ValueError(f"{path}: unknown gold label {gold!r}; expected {MNLI_LABELS} or '-'")
        premise.append(s1)
        hypothesis.append(s2)
        labels.append(index[gold])
    return TextSplit(
        texts=premise,
        pairs=hypothesis,
        labels=np.asarray(labels, dtype=np.int64),
        n_dropped=dropped,
        path=str(path),
        fixture=source["fixture"],
    )
