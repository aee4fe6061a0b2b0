"""Data sources (attnbias.realdata.sources): a text source's presence and fixture flag."""

from __future__ import annotations

import json

import pytest
from fixtures_text import (
    fixture_vocab,
    write_civilcomments,
    write_mnli,
    write_tiny_bert,
)

from attnbias.realdata import sources
from attnbias.realdata.errors import FIXTURE_MARKER

N_TRAIN, N_TEST = 40, 30


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    base = tmp_path_factory.mktemp("text")
    write_mnli(base / "jsonl", N_TRAIN, N_TEST, seed=3, layout="jsonl")
    write_mnli(base / "tsv", N_TRAIN, N_TEST, seed=3, layout="tsv")
    write_civilcomments(base / "civil", 48, 32, seed=5)
    write_tiny_bert(base / "bert", fixture_vocab())
    return base


def test_text_source_checks_presence_and_fixture_flag(roots, tmp_path):
    src = sources.text_source("civilcomments", roots / "civil")
    assert src["fixture"] and src["layout"] == "wilds"
    assert src["path"].endswith("civilcomments_v1.0") and len(src["files"]) == 2
    json.dumps(src)  # goes into source.json as it is
    write_mnli(tmp_path, 5, 5, seed=0, layout="tsv")
    (tmp_path / "MNLI" / FIXTURE_MARKER).unlink()
    assert sources.text_source("mnli", tmp_path)["fixture"] is False
    with pytest.raises(ValueError, match="unknown text dataset"):
        sources.text_source("sst2", tmp_path)
