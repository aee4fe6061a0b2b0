"""Strict loaders (issue 34): a malformed data file fails, naming the file (and the line
where the format has lines), instead of loading as something else or as nothing."""

from __future__ import annotations

import json

import pytest
from fixtures_text import write_mnli

from attnbias.realdata import mnli

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
