"""Text data and BERT loading (attnbias.realdata.mnli, .civilcomments, .bert) on fixtures in the
real formats; CivilComments' evaluation against the `wilds` package's own."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from fixtures_text import (
    IDENTITIES,
    fixture_vocab,
    mnli_expected,
    write_civilcomments,
    write_mnli,
    write_tiny_bert,
)

from attnbias.data.missing import MissingDataError
from attnbias.realdata import bert, civilcomments, mnli, sources
from attnbias.realdata.errors import FIXTURE_MARKER

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


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


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


# ---------------------------------------------------------------------------------------
# CivilComments in WILDS' format


def _csv_rows(root):
    with open(root / "civil/civilcomments_v1.0/all_data_with_identities.csv", newline="") as f:
        return list(csv.DictReader(f))


def _frac(value: str) -> float:
    return float(value) if value else 0.0  # blank = not annotated, below any threshold


def test_civilcomments_loads_as_wilds_does(roots, civil):
    rows = _csv_rows(roots)
    assert civil.fixture
    for split, n in (("train", 48), ("val", 16), ("test", 32)):
        s = civil.split(split)
        mine = [r for r in rows if r["split"] == split]  # wilds keeps the file's order
        assert len(s) == n and s.pairs is None
        assert s.texts == [r["comment_text"] for r in mine]
        assert s.labels.tolist() == [int(float(r["toxicity"]) >= 0.5) for r in mine]
        identity = [[int(_frac(r[c]) >= 0.5) for c in IDENTITIES] for r in mine]
        assert s.metadata[:, : len(IDENTITIES)].tolist() == identity
    assert any(float(r["toxicity"]) == 0.5 for r in rows)  # the >= 0.5 edge is exercised


def _hand_worst_group(rows, pred):
    """Accuracy over rows, and the minimum over the 16 groups (identity >= 0.5, label)."""
    y = np.array([int(float(r["toxicity"]) >= 0.5) for r in rows])
    correct = pred == y
    accs = []
    for c in IDENTITIES:
        has = np.array([_frac(r[c]) >= 0.5 for r in rows])
        for label in (0, 1):
            group = has & (y == label)
            assert group.any()  # else WILDS counts an empty group as accuracy 0
            accs.append(correct[group].mean())
    return correct.mean(), min(accs)


def test_civilcomments_eval_gives_hand_computed_worst_group(roots, civil):
    test = civil.split("test")
    rows = [r for r in _csv_rows(roots) if r["split"] == "test"]
    # a fixed prediction: wrong on the first row of every other (identity, label) group
    # (each fixture row mentions one identity), so group accuracies differ
    pred, seen = test.labels.copy(), []
    for i, r in enumerate(rows):
        group = (max(IDENTITIES, key=lambda c: _frac(r[c])), test.labels[i])
        if group not in seen:
            seen.append(group)
            pred[i] = 1 - pred[i] if len(seen) % 2 else pred[i]
    acc, worst = _hand_worst_group(rows, pred)
    assert 0 < worst < acc < 1
    results, summary = civil.evaluate(pred, test)
    assert results["acc_avg"] == pytest.approx(acc, abs=1e-7)
    assert results["acc_wg"] == pytest.approx(worst, abs=1e-7)
    assert "Worst-group acc" in summary
    logits = np.stack([1.0 - pred, pred.astype(float)], axis=1)  # argmax = pred
    assert civil.evaluate(logits, test)[0]["acc_wg"] == results["acc_wg"]
    extra = civil.evaluator(test)(torch.as_tensor(pred), torch.as_tensor(test.labels))
    assert extra == {"acc_avg": results["acc_avg"], "acc_wg": results["acc_wg"]}
    with pytest.raises(ValueError, match="order"):
        civil.evaluator(test)(torch.as_tensor(pred), torch.as_tensor(test.labels[::-1].copy()))


def _edge_case_copy(roots, tmp_path):
    """The fixture with no "white" row anywhere (WILDS then has no white:1 group) and no
    toxic "muslim" row in the test split (an empty group: accuracy 0 in WILDS)."""
    import pandas as pd

    source = roots / "civil/civilcomments_v1.0"
    folder = tmp_path / "civilcomments_v1.0"
    folder.mkdir()
    frame = pd.read_csv(source / "all_data_with_identities.csv", index_col=0)
    frame["white"] = 0.0
    empty = (frame["split"] == "test") & (frame["toxicity"] >= 0.5) & (frame["muslim"] >= 0.5)
    frame.loc[empty, "muslim"] = 0.0
    frame.to_csv(folder / "all_data_with_identities.csv")
    for name in ("RELEASE_v1.0.txt", FIXTURE_MARKER):
        (folder / name).write_text((source / name).read_text())
    return tmp_path


def _some_predictions(split):
    rng = np.random.default_rng(0)
    return np.where(rng.random(len(split)) < 0.3, 1 - split.labels, split.labels)


@pytest.mark.parametrize("case", ["fixture", "edge cases"])
def test_civilcomments_groups_are_wilds_groups(roots, tmp_path, case):
    """WILDS' own CombinatorialGrouper (importable without torchvision) forms the groups of
    its CivilComments eval: each identity with the label, over the whole file; the eval keeps
    the groups with the identity present. Our groups, names and numbers must be those."""
    pytest.importorskip("wilds", reason="wilds is not installed (pip install --no-deps wilds)")
    from wilds.common.grouper import CombinatorialGrouper
    from wilds.datasets.wilds_dataset import WILDSDataset

    root = roots / "civil" if case == "fixture" else _edge_case_copy(roots, tmp_path)
    civil = civilcomments.load_civilcomments(root)
    # the grouper reads only these three of a WILDSDataset (built as one, without its loader)
    full = WILDSDataset.__new__(WILDSDataset)
    full._metadata_fields = list(civilcomments.METADATA_FIELDS)
    full._metadata_array = torch.as_tensor(civil.metadata)
    full._metadata_map = None
    test = civil.split("test")
    pred = _some_predictions(test)
    correct = pred == test.labels
    expected = {}
    for identity in civilcomments.IDENTITIES:
        grouper = CombinatorialGrouper(dataset=full, groupby_fields=[identity, "y"])
        g = grouper.metadata_to_group(torch.as_tensor(test.metadata)).numpy()
        for group in range(grouper.n_groups):
            name = grouper.group_field_str(group)
            if f"{identity}:1" in name:
                members = g == group
                expected[f"acc_{name}"] = correct[members].mean() if members.any() else 0.0
                expected[f"count_{name}"] = float(members.sum())
    results, _ = civil.evaluate(pred, test)
    groups = {k: v for k, v in results.items() if k not in ("acc_avg", "acc_wg")}
    assert groups == pytest.approx(expected, abs=1e-12)
    accs = [v for k, v in expected.items() if k.startswith("acc_")]
    assert results["acc_wg"] == pytest.approx(min(accs), abs=1e-12)
    assert results["acc_avg"] == pytest.approx(correct.mean(), abs=1e-12)
    if case == "edge cases":
        assert not any("white" in k for k in results) and results["acc_y:1_muslim:1"] == 0.0


def _wilds_civilcomments(root):
    """WILDS' own CivilCommentsDataset, or a skip saying why it cannot be had here."""
    pytest.importorskip("wilds", reason="wilds is not installed (pip install --no-deps wilds)")
    for module, why in (
        ("torchvision", "wilds.common.metrics.all_metrics imports it at module level"),
        ("torch_scatter", "wilds.common.utils.avg_over_groups imports it in the eval"),
    ):
        pytest.importorskip(module, reason=f"wilds' CivilComments eval needs {module} ({why})")
    import pandas as pd

    if int(pd.__version__.split(".")[0]) >= 3:
        pytest.skip(f"wilds 2.0's CivilComments loader fails under pandas {pd.__version__}")
    from wilds.datasets.civilcomments_dataset import CivilCommentsDataset

    return CivilCommentsDataset(root_dir=str(root), download=False)


@pytest.mark.parametrize("case", ["fixture", "edge cases"])
def test_civilcomments_eval_matches_wilds_eval(roots, tmp_path, case):
    root = roots / "civil" if case == "fixture" else _edge_case_copy(roots, tmp_path)
    reference = _wilds_civilcomments(root)
    civil = civilcomments.load_civilcomments(root)
    for split in civilcomments.CIVIL_SPLITS:
        mine = civil.split(split)
        subset = reference.get_subset(split)
        idx = subset.indices
        texts = [reference.get_input(i) for i in idx]
        assert mine.texts == [t if isinstance(t, str) else "" for t in texts]  # NaN: empty
        assert mine.labels.tolist() == reference.y_array[idx].tolist()
        assert mine.metadata.tolist() == reference.metadata_array[idx].tolist()
        pred = _some_predictions(mine)
        theirs, _ = reference.eval(
            torch.as_tensor(pred), reference.y_array[idx], reference.metadata_array[idx]
        )
        ours, _ = civil.evaluate(pred, mine)
        assert ours == pytest.approx({k: float(v) for k, v in theirs.items()}, abs=1e-6)


def test_civilcomments_needs_neither_wilds_nor_torchvision_and_bert_still_works(roots):
    # a fresh interpreter: in this one, other tests may have imported things already
    script = textwrap.dedent(
        f"""
        import sys
        import torch
        from attnbias.realdata import bert, civilcomments
        cc = civilcomments.load_civilcomments({str(roots / "civil")!r})
        assert len(cc.split("test")) == 32
        cc.evaluate(cc.split("test").labels, cc.split("test"))
        absent = ("wilds", "torchvision", "torch_scatter")
        left = [m for m in sys.modules if m.split(".")[0] in absent]
        assert not left, left
        tok, model = bert.load_text_model({str(roots / "bert")!r}, 2, seed=0)
        batch = bert.tokenize_split(tok, cc.split("test"), 16)
        with torch.no_grad():
            out = model(**{{k: v[:4] for k, v in batch.items()}})
        assert out.logits.shape == (4, 2) and torch.isfinite(out.loss)
        print("ok")
        """
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr


def test_missing_civilcomments_names_dataset_key_and_how(tmp_path):
    with pytest.raises(MissingDataError) as err:
        civilcomments.load_civilcomments(tmp_path)
    msg = str(err.value)
    assert "CivilComments" in msg and "real_data.data_root" in msg
    assert "codalab" in msg and "real_data.download" in msg
    assert not (tmp_path / "civilcomments_v1.0").exists()  # nothing created on the way
    write_civilcomments(tmp_path, 16, 16, seed=0)
    (tmp_path / "civilcomments_v1.0/RELEASE_v1.0.txt").unlink()
    with pytest.raises(MissingDataError, match="RELEASE_v1.0.txt"):
        sources.text_source("civilcomments", tmp_path)


# ---------------------------------------------------------------------------------------
# BERT


def test_tiny_bert_loads_offline_by_path_and_classifies_a_batch(roots, offline):
    tok, model = bert.load_text_model(str(roots / "bert"), num_labels=3, seed=0)
    vocab = (roots / "bert/vocab.txt").read_text().split("\n")
    assert tok.convert_tokens_to_ids("maybe") == vocab.index("maybe")  # vocab.txt in force
    split = mnli.load_mnli(roots / "jsonl", "test")
    data = bert.tokenize_split(tok, split, max_length=32)
    n = len(split)
    assert set(data) == {"input_ids", "attention_mask", "token_type_ids", "labels"}
    assert all(v.dtype == torch.int64 and len(v) == n for v in data.values())
    assert data["input_ids"].shape == (n, 32) and torch.equal(
        data["labels"], torch.tensor(split.labels)
    )
    # row 0 is [CLS] premise [SEP] hypothesis [SEP], then padding
    p, h = (tok.tokenize(s) for s in (split.premise[0], split.hypothesis[0]))
    length = len(p) + len(h) + 3
    assert data["attention_mask"][0].sum() == length
    assert data["token_type_ids"][0, len(p) + 2 : length].eq(1).all()
    assert tok.convert_ids_to_tokens(data["input_ids"][0, : len(p) + 1].tolist()) == ["[CLS]", *p]
    assert data["input_ids"][0, length:].eq(tok.pad_token_id).all()
    model.eval()
    with torch.no_grad():
        out = model(**{k: v[:8] for k, v in data.items()})
    assert out.logits.shape == (8, 3) and torch.isfinite(out.loss)
    assert out.logits.argmax(1).max() < 3


def test_single_texts_and_truncation(roots, civil):
    tok, _ = bert.load_text_model(str(roots / "bert"), num_labels=2)
    data = bert.tokenize_split(tok, civil.split("train"), max_length=6, chunk=5)
    assert data["input_ids"].shape == (48, 6) and data["token_type_ids"].eq(0).all()
    assert data["attention_mask"].eq(1).all()  # every comment is longer than 6 tokens
    assert data["input_ids"][:, -1].eq(tok.sep_token_id).all()


def test_classifier_head_seed_is_reproducible_and_private(roots):
    heads = {}
    for seed in (0, 0, 1):
        torch.manual_seed(123)
        _, model = bert.load_text_model(str(roots / "bert"), num_labels=2, seed=seed)
        heads.setdefault(seed, []).append(model.classifier.weight.detach().clone())
        after = torch.rand(3)
        torch.manual_seed(123)
        assert torch.equal(after, torch.rand(3))  # the global stream was not consumed
    assert torch.equal(heads[0][0], heads[0][1]) and not torch.equal(heads[0][0], heads[1][0])


def test_missing_model_names_model_key_and_how(roots, tmp_path, offline, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    cases = {
        str(tmp_path / "no_such_folder"): "No model folder",
        "./models/bert": "No model folder",
        "attnbias-tests/no-such-model": "HF_HUB_OFFLINE",
        str(roots): "no config.json",  # a folder, but not a model
    }
    for name, why in cases.items():
        with pytest.raises(MissingDataError) as err:
            bert.load_text_model(name, num_labels=2)
        msg = str(err.value)
        assert why in msg and name in msg and "real_data.models.bert" in msg
        assert "hf download" in msg and "save_pretrained" in msg


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
