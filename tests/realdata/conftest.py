"""Fixtures of the real-data tests (tests/realdata/): the fixture text data and BERT written
once per test module, in the real on-disk formats (fixtures_text)."""

from __future__ import annotations

import pytest
from fixtures_text import (
    N_TEST,
    N_TRAIN,
    fixture_vocab,
    write_civilcomments,
    write_mnli,
    write_tiny_bert,
)

from attnbias.realdata import civilcomments


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory):
    """MNLI (40 train, 16 test examples) in data/ and the tiny BERT in bert/."""
    root = tmp_path_factory.mktemp("text")
    write_mnli(root / "data", n_train=40, n_test=16, seed=0)
    write_tiny_bert(root / "bert", fixture_vocab())
    return root


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    """MNLI in both layouts (jsonl/, tsv/), CivilComments (civil/) and the tiny BERT (bert/)."""
    base = tmp_path_factory.mktemp("text")
    write_mnli(base / "jsonl", N_TRAIN, N_TEST, seed=3, layout="jsonl")
    write_mnli(base / "tsv", N_TRAIN, N_TEST, seed=3, layout="tsv")
    write_civilcomments(base / "civil", 48, 32, seed=5)
    write_tiny_bert(base / "bert", fixture_vocab())
    return base


@pytest.fixture(scope="module")
def civil(roots):
    """The fixture CivilComments, loaded."""
    return civilcomments.load_civilcomments(roots / "civil", download=False)
