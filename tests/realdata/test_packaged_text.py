"""Packaged text corpora (attnbias.realdata.packaged_text): rows, labels and a fixed,
stratified split.
"""

from __future__ import annotations

import bz2
from pathlib import Path

import numpy as np
import pytest
from fixtures_packaged import (
    csv_frame,
    rotten_tomatoes_csv,
    sms_spam_csv,
)

from attnbias.data.missing import WrongFileError
from attnbias.realdata import packaged_text, pinned
from attnbias.realdata.errors import mark_fixture

# ---- the corpora -------------------------------------------------------------------------


def _corpus_root(tmp_path, name: str, data: bytes) -> Path:
    d = packaged_text.DATASETS[name]
    folder = pinned.folder(d.pin, tmp_path)
    folder.mkdir(parents=True)
    (folder / d.member).write_bytes(data)
    mark_fixture(folder)
    return tmp_path


def test_rotten_tomatoes_leaves_out_plot_rows_and_rows_without_text(tmp_path):
    data = rotten_tomatoes_csv(30, 20, 9)
    root = _corpus_root(tmp_path, "rotten_tomatoes", data)
    texts, labels, counts = packaged_text.read("rotten_tomatoes", root)
    assert counts == {"rotten": 20, "fresh": 30, "left_out_other_label": 9, "left_out_no_text": 1}
    frame = csv_frame(bz2.decompress(data))
    fresh = set(frame[frame["category"] == "fresh"]["text"].dropna())
    assert {t for t, y in zip(texts, labels, strict=True) if y == 1} == fresh
    assert not set(texts) & set(frame[frame["category"] == "plot"]["text"])


def test_sms_spam_labels_spam_as_one(tmp_path):
    root = _corpus_root(tmp_path, "sms_spam", sms_spam_csv(40, 10))
    _, labels, counts = packaged_text.read("sms_spam", root)
    assert counts["ham"] == 40 and counts["spam"] == 10 and labels.sum() == 10


def test_the_split_is_stratified_sized_and_fixed():
    labels = np.array([1] * 700 + [0] * 300)
    split = packaged_text.stratified_split(labels, 200, 100)
    assert len(split["train"]) == 200 and len(split["test"]) == 100
    assert not set(split["train"]) & set(split["test"])
    assert labels[split["train"]].mean() == pytest.approx(0.7)
    assert labels[split["test"]].mean() == pytest.approx(0.7)
    again = packaged_text.stratified_split(labels, 200, 100)
    assert all(np.array_equal(split[k], again[k]) for k in split)
    default = packaged_text.stratified_split(labels, None, None)
    assert len(default["test"]) == 200 and len(default["train"]) == 800


def test_a_split_larger_than_the_data_names_the_config_keys():
    with pytest.raises(ValueError, match="train_samples, test_samples"):
        packaged_text.stratified_split(np.array([0, 1] * 10), 15, 10)


def test_a_wrong_corpus_file_is_refused_before_it_is_read(tmp_path):
    d = packaged_text.DATASETS["sms_spam"]
    folder = pinned.folder(d.pin, tmp_path)
    folder.mkdir(parents=True)
    (folder / d.member).write_bytes(sms_spam_csv(5, 5))  # not the release's file, no marker
    with pytest.raises(WrongFileError, match="sms-spam.csv"):
        packaged_text.read("sms_spam", tmp_path)
