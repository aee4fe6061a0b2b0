"""Strict loaders: a malformed data file fails, naming the file (and the line
where the format has lines), instead of loading as something else or as nothing: MNLI,
CivilComments, MNIST's IDX files, CIFAR-10's batches."""

from __future__ import annotations

import csv
import gzip
import json
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
from fixtures_text import write_civilcomments, write_mnli
from fixtures_vision import write_cifar10

from attnbias.data.idx import read_idx
from attnbias.realdata import civilcomments, mnli
from attnbias.realdata.errors import FIXTURE_MARKER
from attnbias.realdata.vision_files import read_cifar10, read_cifar_batch

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


# ---------------------------------------------------------------- CivilComments

CIVIL_CSV = "civilcomments_v1.0/all_data_with_identities.csv"


@pytest.fixture
def civil_root(tmp_path):
    write_civilcomments(tmp_path, 24, 16, seed=5)
    return tmp_path


def _civil_load(root):
    return civilcomments.load_civilcomments(root, download=False)


def _rewrite_csv(root, change) -> Path:
    path = root / CIVIL_CSV
    with open(path, newline="", encoding="utf-8") as f:
        records = list(csv.reader(f))
    records = change(records)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(records)
    return path


def test_intact_civilcomments_loads_every_split(civil_root):
    civil = _civil_load(civil_root)
    assert all(len(civil.split(name)) > 0 for name in civilcomments.CIVIL_SPLITS)


def _column(records, name: str) -> int:
    return records[0].index(name)


def _set_field(name: str, value: str, row: int = 1):
    def change(records):
        records[row][_column(records, name)] = value
        return records

    return change


CIVIL_DAMAGE = {
    # the case: read_csv(index_col=0) took the extra field for an index column
    "extra field in the first row": (lambda r: [r[0], [*r[1], "0.0"], *r[2:]], ":2: .* fields"),
    "row cut short": (lambda r: [*r[:-1], r[-1][:-3]], r":\d+: .* fields"),
    "unknown split": (_set_field("split", "training"), "split values \\['training'\\]"),
    "no split value": (_set_field("split", ""), "split values \\['\\(empty\\)'\\]"),
    "no toxicity": (_set_field("toxicity", ""), "has no toxicity"),
    "toxicity not a number": (_set_field("toxicity", "high"), "high"),
    "fraction above 1": (_set_field("male", "3.0"), "male holds values outside"),
    "header only": (lambda r: r[:1], "no row of the split"),
    "no test rows": (
        lambda r: [r[0], *(x for x in r[1:] if x[_column(r, "split")] != "test")],
        "no row of the split\\(s\\) \\['test'\\]",
    ),
    "empty file": (lambda r: [], "is empty"),
}


@pytest.mark.parametrize("case", list(CIVIL_DAMAGE))
def test_a_malformed_civilcomments_csv_fails_naming_the_file(civil_root, case):
    change, why = CIVIL_DAMAGE[case]
    path = _rewrite_csv(civil_root, change)
    with pytest.raises(civilcomments.CivilCommentsFormatError, match=rf"{path}.*{why}"):
        _civil_load(civil_root)


def test_a_file_cut_inside_a_quoted_text_fails_naming_the_file(civil_root):
    path = civil_root / CIVIL_CSV
    text = path.read_text(encoding="utf-8")
    last = text.rstrip("\n").rsplit("\n", 1)[0] + '\n99,"a comment cut sh'
    path.write_text(last, encoding="utf-8")
    with pytest.raises(civilcomments.CivilCommentsFormatError, match=str(path)):
        _civil_load(civil_root)


def test_a_release_of_another_size_is_refused_unless_a_fixture(civil_root):
    (civil_root / "civilcomments_v1.0" / FIXTURE_MARKER).unlink()  # as if the real release
    with pytest.raises(civilcomments.CivilCommentsFormatError, match="448000"):
        _civil_load(civil_root)


# ---------------------------------------------------------------- MNIST (IDX), CIFAR-10


def _idx(tmp_path, header: bytes, body: bytes = b"", gz: bool = False) -> Path:
    path = tmp_path / ("file.gz" if gz else "file")
    if gz:
        with gzip.open(path, "wb") as f:
            f.write(header + body)
    else:
        path.write_bytes(header + body)
    return path


def test_an_intact_idx_file_reads(tmp_path):
    path = _idx(tmp_path, struct.pack(">iiii", 2051, 2, 3, 4), bytes(range(24)), gz=True)
    assert read_idx(path, 2051).shape == (2, 3, 4)


def test_idx_dimensions_that_overflow_int64_are_refused_by_size(tmp_path):
    """2^30 x 2^30 x 16 is 2^64 bytes: 0 in int64, which passed the size check before."""
    path = _idx(tmp_path, struct.pack(">iiii", 2051, 2**30, 2**30, 16))
    with pytest.raises(ValueError, match=rf"{path}: .* 18446744073709551616 bytes, more than"):
        read_idx(path, 2051)


@pytest.mark.parametrize("dims", [(0, 28, 28), (10, -28, 28), (10, 28, 0)])
def test_idx_dimensions_must_be_positive(tmp_path, dims):
    path = _idx(tmp_path, struct.pack(">iiii", 2051, *dims))
    with pytest.raises(ValueError, match=rf"{path}: IDX dimensions .* must all be positive"):
        read_idx(path, 2051)


def test_a_gzip_bomb_is_refused_without_inflating_it(tmp_path, monkeypatch):
    """A small .gz whose header promises 10 labels, followed by 64 MiB of zeros: refused
    after reading one byte past the 10, never inflated whole."""
    path = tmp_path / "labels.gz"
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">ii", 2049, 10))
        for _ in range(64):
            f.write(bytes(2**20))
    assert path.stat().st_size < 2**20
    read_sizes = []
    original = gzip.GzipFile.read

    def counting_read(self, size=-1):
        read_sizes.append(size)
        return original(self, size)

    monkeypatch.setattr(gzip.GzipFile, "read", counting_read)
    with pytest.raises(ValueError, match=rf"{path}: longer than the 18 bytes"):
        read_idx(path, 2049)
    assert read_sizes and max(read_sizes) <= 11 and -1 not in read_sizes


def _cifar_batch(tmp_path, batch) -> Path:
    write_cifar10(tmp_path, 10, 5, 0)
    path = tmp_path / "cifar-10-batches-py/data_batch_2"
    path.write_bytes(pickle.dumps(batch, protocol=2))
    return path


@pytest.mark.parametrize(
    "labels, why",
    [
        (["cat", "dog"], "labels are a list holding str"),
        ([0.5, 1.5], "labels are a list holding float"),
        ("01", "labels are a str"),
        ({0: 1}, "labels are a dict"),
        (np.array([0.0, 1.0]), "labels are a ndarray"),
    ],
)
def test_cifar_labels_of_the_wrong_type_name_the_file(tmp_path, labels, why):
    path = _cifar_batch(tmp_path, {b"data": np.zeros((2, 3072), np.uint8), b"labels": labels})
    with pytest.raises(ValueError, match=rf"{path}: {why}"):
        read_cifar10(tmp_path)


@pytest.mark.parametrize("data", [[[0] * 3072] * 2, b"\x00" * 6144, None])
def test_cifar_data_of_the_wrong_type_names_the_file(tmp_path, data):
    path = _cifar_batch(tmp_path, {b"data": data, b"labels": [0, 1]})
    with pytest.raises(ValueError, match=rf"{path}: data is a"):
        read_cifar10(tmp_path)


def test_a_cifar_batch_with_a_non_utf8_key_names_the_file_and_the_fix(tmp_path):
    """The trial's case (a UnicodeDecodeError before): the key shown escaped."""
    path = _cifar_batch(tmp_path, {b"d\xffta": np.zeros((2, 3072), np.uint8), b"labels": [0, 1]})
    with pytest.raises(ValueError) as err:
        read_cifar10(tmp_path)
    message = str(err.value)
    assert message.startswith(f"{path}: no 'data' or 'labels' entry (has 'd\\\\xffta', "), message
    assert "cifar-10-python.tar.gz" in message


def test_an_unreadable_cifar_batch_names_the_file(tmp_path):
    write_cifar10(tmp_path, 10, 5, 0)
    path = tmp_path / "cifar-10-batches-py/data_batch_2"
    path.unlink()
    path.mkdir()  # exists, but cannot be opened as a file
    with pytest.raises(ValueError, match=rf"{path}: cannot be read"):
        read_cifar_batch(path)
