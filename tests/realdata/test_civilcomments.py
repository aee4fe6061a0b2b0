"""CivilComments (attnbias.realdata.civilcomments): read as wilds reads it, evaluated as
wilds evaluates it, and malformed files refused naming the file.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from fixtures_text import (
    IDENTITIES,
    fixture_vocab,
    write_civilcomments,
    write_mnli,
    write_tiny_bert,
)

from attnbias.data.missing import MissingDataError
from attnbias.realdata import civilcomments, sources
from attnbias.realdata.errors import FIXTURE_MARKER

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


N_TRAIN, N_TEST = 40, 30


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
