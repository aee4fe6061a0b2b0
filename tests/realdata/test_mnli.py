"""Strict loaders: a malformed data file fails, naming the file (and the line
where the format has lines), instead of loading as something else or as nothing: MNLI,
CivilComments, MNIST's IDX files, CIFAR-10's batches.

Text data and BERT loading (attnbias.realdata.mnli, .civilcomments, .bert) on fixtures in the
real formats; CivilComments' evaluation against the `wilds` package's own.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from fixtures_text import (
    fixture_vocab,
    mnli_expected,
    write_civilcomments,
    write_mnli,
    write_tiny_bert,
)

from attnbias.data.missing import MissingDataError
from attnbias.realdata import civilcomments, mnli, sources

JSONL = "multinli_1.0/multinli_1.0_train.jsonl"


TSV = "MNLI/train.tsv"


@pytest.fixture
def jsonl_root(tmp_path):
    write_mnli(tmp_path, 10, 10, seed=0, layout="jsonl")
    return tmp_path


@pytest.fixture
def tsv_root(tmp_path):
    write_mnli(tmp_path, 10, 10, seed=0, layout="tsv")
    return tmp_path


def _lines(path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_intact_mnli_files_load(jsonl_root, tsv_root):
    """The negative control of the refusals below: the fixture files as written load."""
    assert len(mnli.load_mnli(jsonl_root, "train").labels) > 0
    assert len(mnli.load_mnli(tsv_root, "train").labels) > 0


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda line: line[: len(line) // 2], "not a JSON object"),  # cut mid-line
        (
            lambda line: json.dumps({"sentence1": "a", "gold_label": "neutral"}).encode(),
            "no sentence2",
        ),
        (lambda line: b"\xff\xfe" + line, "not UTF-8"),
        (lambda line: b"[1, 2]\n", "a JSON list, not an object"),
        (
            lambda line: json.dumps(
                {"sentence1": 1, "sentence2": "b", "gold_label": "neutral"}
            ).encode(),
            "must be strings",
        ),
    ],
    ids=["cut", "missing key", "bad utf-8", "not an object", "not a string"],
)
def test_a_damaged_jsonl_line_names_file_and_line(jsonl_root, damage, why):
    path = jsonl_root / JSONL
    lines = _lines(path)
    lines[3] = damage(lines[3]).rstrip(b"\n") + b"\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(mnli.MNLIFormatError, match=rf"{path}:4: .*{why}"):
        mnli.load_mnli(jsonl_root, "train")


def test_a_file_cut_mid_line_names_its_last_line(jsonl_root):
    path = jsonl_root / JSONL
    content = path.read_bytes()
    path.write_bytes(content[: len(content) - 20])
    n = len(_lines(path))
    with pytest.raises(mnli.MNLIFormatError, match=rf"{path}:{n}: not a JSON object"):
        mnli.load_mnli(jsonl_root, "train")


def test_an_unknown_gold_label_names_file_and_line(jsonl_root):
    path = jsonl_root / JSONL
    lines = _lines(path)
    row = json.loads(lines[1])
    row["gold_label"] = "contradictory"
    lines[1] = json.dumps(row).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    with pytest.raises(mnli.MNLIFormatError, match=rf"{path}:2: unknown gold label"):
        mnli.load_mnli(jsonl_root, "train")


@pytest.mark.parametrize(
    "damage, line, why",
    [
        (lambda lines: lines[:2] + [b"\xff" + lines[2]] + lines[3:], 3, "not UTF-8"),
        (
            lambda lines: lines[:4] + [lines[4].rstrip(b"\n") + b"\textra\n"] + lines[5:],
            5,
            "fields",
        ),
        (lambda lines: [], 1, "empty"),
    ],
    ids=["bad utf-8", "extra field", "empty"],
)
def test_a_damaged_tsv_names_file_and_line(tsv_root, damage, line, why):
    path = tsv_root / TSV
    path.write_bytes(b"".join(damage(_lines(path))))
    with pytest.raises(mnli.MNLIFormatError, match=rf"{path}:{line}: .*{why}"):
        mnli.load_mnli(tsv_root, "train")


def test_an_mnli_split_without_examples_is_refused(jsonl_root):
    path = jsonl_root / JSONL
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=rf"{path}: no example"):
        mnli.load_mnli(jsonl_root, "train")


N_TRAIN, N_TEST = 40, 30


CUE_LABEL = {"yes": 0, "maybe": 1, "never": 2}  # the fixture's cue word -> MNLI label index


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    base = tmp_path_factory.mktemp("text")
    write_mnli(base / "jsonl", N_TRAIN, N_TEST, seed=3, layout="jsonl")
    write_mnli(base / "tsv", N_TRAIN, N_TEST, seed=3, layout="tsv")
    write_civilcomments(base / "civil", 48, 32, seed=5)
    write_tiny_bert(base / "bert", fixture_vocab())
    return base


@pytest.fixture(scope="module")
def civil(roots):
    return civilcomments.load_civilcomments(roots / "civil", download=False)


# ---------------------------------------------------------------------------------------
# MNLI


@pytest.mark.parametrize("split", ["train", "test"])
def test_mnli_layouts_load_the_same_rows(roots, split):
    expected = mnli_expected(N_TRAIN, N_TEST, seed=3)[split]
    got = {}
    for layout in ("jsonl", "tsv"):
        s = mnli.load_mnli(roots / layout, split)
        got[layout] = list(zip(s.premise, s.hypothesis, s.labels.tolist(), strict=True))
        assert s.labels.dtype == np.int64 and s.fixture
        assert s.n_dropped == expected["dropped"] > 0
    assert got["jsonl"] == got["tsv"] == expected["rows"]
    assert any('"' in p for p, _, _ in got["tsv"])  # bare quotes survived GLUE's unquoted tsv


def test_mnli_label_mapping_follows_the_gold_labels(roots):
    # independent of the fixture's generator: its hypotheses start with the label's cue word
    s = mnli.load_mnli(roots / "jsonl", "train")
    cues = [CUE_LABEL[h.split()[0]] for h in s.hypothesis]
    assert s.labels.tolist() == cues
    assert set(s.labels.tolist()) == {0, 1, 2}


def test_mnli_gold_label_dash_rows_are_counted(roots):
    with open(roots / "jsonl/multinli_1.0/multinli_1.0_dev_matched.jsonl") as f:
        gold = [json.loads(line)["gold_label"] for line in f]
    s = mnli.load_mnli(roots / "jsonl", "test")
    assert s.n_dropped == gold.count("-") and len(s) == len(gold) - gold.count("-")


def test_mnli_official_layout_wins_and_bad_labels_fail(roots, tmp_path):
    write_mnli(tmp_path, 10, 10, seed=0, layout="tsv")
    write_mnli(tmp_path, 10, 10, seed=1, layout="jsonl")
    assert sources.text_source("mnli", tmp_path)["layout"] == "jsonl"
    path = tmp_path / "multinli_1.0/multinli_1.0_train.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[2]["gold_label"] = "contradictory"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match="contradictory"):
        mnli.load_mnli(tmp_path, "train")
    with pytest.raises(ValueError, match="split"):
        mnli.load_mnli(tmp_path, "validation")


def test_missing_mnli_names_dataset_key_and_how(tmp_path):
    for root in (tmp_path, None):
        with pytest.raises(MissingDataError) as err:
            mnli.load_mnli(root, "train")
        msg = str(err.value)
        assert "MNLI" in msg and "real_data.data_root" in msg
        assert "multinli_1.0.zip" in msg and "glue/data/MNLI.zip" in msg
    assert "multinli_1.0_dev_matched.jsonl" in msg and isinstance(err.value, FileNotFoundError)


def test_fixture_labels_are_learnable(roots, civil):
    # a bag-of-words classifier must get them right, or the training figures on the
    # fixtures could not show a falling loss
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    for train, test in (
        (mnli.load_mnli(roots / "tsv", "train"), mnli.load_mnli(roots / "tsv", "test")),
        (civil.split("train"), civil.split("test")),
    ):
        features = CountVectorizer(token_pattern=r"\w+")
        x = features.fit_transform([" ".join(filter(None, r)) for r in _texts(train)])
        clf = LogisticRegression(C=100.0, max_iter=5000).fit(x, train.labels)
        x_test = features.transform([" ".join(filter(None, r)) for r in _texts(test)])
        assert clf.score(x_test, test.labels) >= 0.9


def _texts(split):
    return zip(split.texts, split.pairs or [None] * len(split), strict=True)
