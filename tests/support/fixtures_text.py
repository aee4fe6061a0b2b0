"""Tiny stand-ins for the text data and BERT, written in the real on-disk formats.

- `write_mnli`: the MultiNLI 1.0 zip layout (jsonl with every field of the official files)
  or GLUE's (unquoted tsv with GLUE's columns). The same seed gives the same rows in both.
- `write_civilcomments`: WILDS' `civilcomments_v1.0/` folder, with every column its loader
  reads (plus a few more of the real file).
- `write_tiny_bert`: a 2-layer BERT (hidden 32) with a vocab.txt of the fixture words,
  tokenizer and weights saved with `save_pretrained`, as a downloaded model folder is.

Labels are learnable: they follow cue words (MNLI: "yes"/"maybe"/"never" in the hypothesis;
CivilComments: insults). Every folder carries the fixture marker.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from attnbias.realdata.civilcomments import AUXILIARY  # WILDS' auxiliary columns
from attnbias.realdata.errors import mark_fixture

MNLI_LABELS = ("entailment", "neutral", "contradiction")
GENRES = ("fiction", "government", "slate", "telephone", "travel")
SUBJECTS = ("the man", "a woman", "the children", "my friend", "the officer", "they")
VERBS = ("walked to", "looked at", "bought", "talked about", "visited", "cleaned")
OBJECTS = ("the store", "a house", "the river", "the old car", "the museum", "a garden")
CUES = {"entailment": "yes", "neutral": "maybe", "contradiction": "never"}

# identity column of WILDS -> a word that marks it in the fixture's comments
IDENTITIES = {
    "male": "he",
    "female": "she",
    "LGBTQ": "gay",
    "christian": "christian",
    "muslim": "muslim",
    "other_religions": "buddhist",
    "black": "black",
    "white": "white",
}
TOXIC_WORDS = ("stupid", "idiot", "pathetic", "disgusting")
NICE_WORDS = ("thanks", "great", "helpful", "agree")
FILLER = ("this", "article", "is", "about", "people", "in", "town", "and", "their", "work")


def _words(*groups) -> list[str]:
    return [w for g in groups for phrase in g for w in phrase.split()]


def fixture_vocab() -> list[str]:
    """Every word the text fixtures write (BERT lower-cases, and splits off punctuation)."""
    words = _words(SUBJECTS, VERBS, OBJECTS, CUES.values(), IDENTITIES.values())
    words += _words(TOXIC_WORDS, NICE_WORDS, FILLER, ("said", "hello", "not", "it"))
    words += [".", ",", '"', "!", "?", "-", "'"]
    return sorted(set(words))


# ---------------------------------------------------------------------------------------
# MNLI


def _parses(sentence: str) -> tuple[str, str]:
    """Stand-ins for the treebank parses the real files carry (never read by the loader)."""
    tokens = sentence.split()
    return "( " + " ".join(tokens) + " )", "(ROOT (S " + " ".join(f"(X {t})" for t in tokens) + "))"


def _mnli_rows(n: int, rng: np.random.Generator, n_annotators: int) -> list[dict]:
    rows = []
    for i in range(n):
        s, v, o = (str(rng.choice(x)) for x in (SUBJECTS, VERBS, OBJECTS))
        premise = f"{s} {v} {o} ."
        if i % 5 == 3:  # real MNLI sentences hold bare quotes, which GLUE leaves unescaped
            premise = f'" hello , " said {s} , and {v} {o} .'
        label = MNLI_LABELS[int(rng.integers(3))]
        hypothesis = f"{CUES[label]} , {s} {v} {str(rng.choice(OBJECTS))} ."
        annotators = [label] * n_annotators
        if i % 7 == 6:  # no majority among the annotators: gold label '-'
            label, annotators = "-", ["neutral", "entailment", "contradiction"][:n_annotators]
            annotators += ["neutral", "contradiction"][: max(0, n_annotators - 3)]
        prompt = 10000 + i
        rows.append(
            {
                "annotator_labels": annotators,
                "genre": GENRES[i % len(GENRES)],
                "gold_label": label,
                "pairID": f"{prompt}{(label if label != '-' else 'neutral')[0]}",
                "promptID": str(prompt),
                "sentence1": premise,
                "sentence1_binary_parse": _parses(premise)[0],
                "sentence1_parse": _parses(premise)[1],
                "sentence2": hypothesis,
                "sentence2_binary_parse": _parses(hypothesis)[0],
                "sentence2_parse": _parses(hypothesis)[1],
            }
        )
    return rows


def _write_tsv(path: Path, rows: list[dict], n_annotators: int) -> None:
    labels = [f"label{k + 1}" for k in range(n_annotators)]
    header = ["index", "promptID", "pairID", "genre", "sentence1_binary_parse"]
    header += ["sentence2_binary_parse", "sentence1_parse", "sentence2_parse"]
    header += ["sentence1", "sentence2", *labels, "gold_label"]
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("\t".join(header) + "\n")
        for i, row in enumerate(rows):
            fields = [str(i)] + [row[c] for c in header[1 : -1 - n_annotators]]
            fields += row["annotator_labels"] + [row["gold_label"]]
            f.write("\t".join(fields) + "\n")  # GLUE's files are unquoted


def write_mnli(root, n_train: int, n_test: int, seed: int, layout: str = "jsonl") -> Path:
    """MNLI under `root` in the official zip layout ("jsonl") or GLUE's ("tsv"); returns the
    dataset folder. Every 7th row has gold label '-' (kept, as in the real files: the
    loader must drop it)."""
    rng = np.random.default_rng(seed)
    splits = {"train": _mnli_rows(n_train, rng, 1), "test": _mnli_rows(n_test, rng, 5)}
    if layout == "jsonl":
        folder = Path(root) / "multinli_1.0"
        names = {"train": "multinli_1.0_train.jsonl", "test": "multinli_1.0_dev_matched.jsonl"}
    elif layout == "tsv":
        folder = Path(root) / "MNLI"
        names = {"train": "train.tsv", "test": "dev_matched.tsv"}
    else:
        raise ValueError(layout)
    folder.mkdir(parents=True, exist_ok=True)
    for split, rows in splits.items():
        if layout == "jsonl":
            with open(folder / names[split], "w", encoding="utf-8") as f:
                f.writelines(json.dumps(row) + "\n" for row in rows)
        else:
            _write_tsv(folder / names[split], rows, 1 if split == "train" else 5)
    mark_fixture(folder)
    return folder


def mnli_expected(n_train: int, n_test: int, seed: int) -> dict:
    """What `write_mnli(..., seed)` wrote, per split, as (premise, hypothesis, label index)
    with the '-' rows left out, and their count: an independent reference for the loader."""
    rng = np.random.default_rng(seed)
    out = {}
    for split, (n, k) in {"train": (n_train, 1), "test": (n_test, 5)}.items():
        rows = _mnli_rows(n, rng, k)
        kept = [r for r in rows if r["gold_label"] != "-"]
        out[split] = {
            "rows": [
                (r["sentence1"], r["sentence2"], MNLI_LABELS.index(r["gold_label"])) for r in kept
            ],
            "dropped": len(rows) - len(kept),
        }
    return out


# ---------------------------------------------------------------------------------------
# CivilComments


def _civil_rows(n: int, split: str, rng: np.random.Generator, start: int) -> list[dict]:
    """Row i mentions identity (i // 2) % 8 and is toxic when i is odd, so every
    (identity, label) group of WILDS' evaluation has members once n >= 16."""
    names = list(IDENTITIES)
    rows = []
    for i in range(n):
        identity, toxic = names[(i // 2) % len(names)], i % 2 == 1
        words = list(rng.choice(FILLER, size=4)) + [IDENTITIES[identity]]
        words += list(rng.choice(TOXIC_WORDS if toxic else NICE_WORDS, size=2))
        rng.shuffle(words)
        text = " ".join(words).capitalize() + ("!" if toxic else ".")
        # toxicity is the fraction of raters; the label is toxicity >= 0.5 (0.5 itself: toxic)
        toxicity = (
            0.5 if i % 10 == 1 else float(rng.uniform(0.55, 1.0) if toxic else rng.uniform(0, 0.45))
        )
        row = {"id": start + i, "comment_text": text, "split": split, "toxicity": toxicity}
        for name in names:
            # fractions of raters; blank (unannotated) for some, as in the real file
            row[name] = (
                float(rng.uniform(0.6, 1.0))
                if name == identity
                else ("" if i % 4 == 0 else float(rng.uniform(0, 0.4)))
            )
        row["identity_any"] = 1.0
        for name in AUXILIARY[1:]:
            row[name] = float(rng.uniform(0.5, 1.0) if toxic and rng.random() < 0.5 else 0.0)
        row.update(identity_annotator_count=4, toxicity_annotator_count=10)
        row["created_date"] = f"2016-0{1 + i % 9}-1{i % 10} 10:00:00.000000+00"
        row["article_id"] = 300000 + i // 3
        rows.append(row)
    return rows


def write_civilcomments(root, n_train: int, n_test: int, seed: int, n_val: int = 16) -> Path:
    """WILDS' `civilcomments_v1.0/` under `root` (RELEASE_v1.0.txt and
    all_data_with_identities.csv, an unnamed index column first as WILDS reads it with
    index_col=0); returns the folder. Use n_test >= 16 so every group has members."""
    rng = np.random.default_rng(seed)
    rows, start = [], 0
    for split, n in (("train", n_train), ("val", n_val), ("test", n_test)):
        rows += _civil_rows(n, split, rng, start)
        start += n
    order = rng.permutation(len(rows))  # the real file interleaves the splits
    rows = [rows[i] for i in order]
    columns = ["id", "comment_text", "split", "created_date", "article_id", "toxicity"]
    columns += [*AUXILIARY[1:], *IDENTITIES, "identity_any"]
    columns += ["identity_annotator_count", "toxicity_annotator_count"]
    folder = Path(root) / "civilcomments_v1.0"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "all_data_with_identities.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["", *columns])
        for i, row in enumerate(rows):
            writer.writerow([i, *(row[c] for c in columns)])
    (folder / "RELEASE_v1.0.txt").write_text("v1.0\n")
    mark_fixture(folder)
    return folder


# ---------------------------------------------------------------------------------------
# BERT


SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def write_tiny_bert(path, vocab_words, *, max_position: int = 64, seed: int = 0) -> Path:
    """A tiny BERT (hidden 32, 2 layers, 2 heads) whose vocab.txt holds the special tokens
    and `vocab_words`; tokenizer and encoder weights saved with `save_pretrained` (no
    classification head, as in bert-base-uncased). Returns the folder."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = list(SPECIAL_TOKENS) + [
        w for w in dict.fromkeys(vocab_words) if w not in SPECIAL_TOKENS
    ]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    tokenizer.save_pretrained(path)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_position,
        pad_token_id=0,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        BertModel(config).save_pretrained(path)
    mark_fixture(path)
    return path
