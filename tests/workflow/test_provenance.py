"""Figure provenance: the record's parts against hand-computed values, the record read back
from the PDF (its Info dictionary, parsed here independently of matplotlib) and the PNG,
and the records of the built figures against the files they describe.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import re
import subprocess
import warnings
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch
import yaml
from PIL import Image

from attnbias.workflow import (
    parquet,
    provenance,
)

matplotlib.use("Agg")


def test_provenance_is_strict_json(tmp_path):
    from attnbias.workflow import provenance

    with pytest.raises(ValueError):
        provenance.config_sha256({"lr": math.nan})
    with pytest.raises(ValueError):
        provenance.save(tmp_path / "p.json", {"config": {"lr": math.inf}})
    assert not (tmp_path / "p.json").exists()


def test_provenance_lists_the_inputs_checksums(tmp_path):
    first, second = tmp_path / "a.parquet", tmp_path / "b.npz"
    first.write_bytes(b"abc")
    second.write_bytes(b"")
    sums = provenance.files_sha256([second, first])
    assert list(sums) == [str(first), str(second)]
    assert sums[str(first)] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert sums[str(second)] == ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    record = json.loads(json.dumps(sums))
    assert record == sums


# ---- the record's parts ------------------------------------------------------------


def test_config_hash_is_sha256_of_canonical_json():
    config = {"b": [1, 2.5], "a": {"y": "t", "x": None}}
    by_hand = '{"a":{"x":null,"y":"t"},"b":[1,2.5]}'
    assert provenance.config_sha256(config) == hashlib.sha256(by_hand.encode()).hexdigest()
    assert provenance.config_sha256({"a": {"x": None, "y": "t"}, "b": [1, 2.5]}) == (
        provenance.config_sha256(config)
    )  # key order does not matter
    assert provenance.config_sha256({**config, "b": [1, 2.6]}) != provenance.config_sha256(config)
    with pytest.raises(TypeError):
        provenance.config_sha256({"a": object()})


def _git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.org"]
    done = subprocess.run(
        ["git", *identity, "-C", str(repo), *args], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_git_state_of_a_checkout_clean_and_dirty(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-q", "-m", "first")
    head = _git(tmp_path, "rev-parse", "HEAD")
    assert provenance.git_state(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "a.txt").write_text("two\n")
    assert provenance.git_state(tmp_path) == {"commit": head, "dirty": True}
    _git(tmp_path, "checkout", "-q", "a.txt")
    (tmp_path / "new.py").write_text("")  # an untracked file: the tree is not the commit
    assert provenance.git_state(tmp_path)["dirty"] is True


def test_git_state_outside_a_checkout_is_unknown(tmp_path):
    assert provenance.git_state(tmp_path) == {"commit": "unknown", "dirty": "unknown"}


def _benchmark(path: Path, *seconds: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"{s}\t0:00:00\t1\t1\t1\t1\t0\t0\t1\t{s}\n" for s in seconds)
    path.write_text(
        "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n" + rows
    )
    return path


def test_wall_times_per_rule_from_benchmark_files(tmp_path):
    root = tmp_path / "results" / "benchmarks"
    files = [
        _benchmark(root / "train" / "fig2" / "gd" / "seed0.tsv", 2.5),
        _benchmark(root / "train" / "fig2" / "gd" / "seed1.tsv", 1.25),
        _benchmark(root / "data" / "fig2" / "seed0.tsv", 0.5, 0.25),  # a repeated benchmark
    ]
    assert provenance.wall_times(files) == {
        "total": 4.5,
        "rules": {
            "train": {"jobs": 2, "total": 3.75, "max": 2.5},
            "data": {"jobs": 1, "total": 0.75, "max": 0.75},
        },
    }
    with pytest.raises(ValueError, match="results/benchmarks/<rule>"):
        provenance.wall_times([_benchmark(tmp_path / "elsewhere.tsv", 1.0)])


def test_training_info_from_the_runs_records(tmp_path):
    table = pa.table({"value": [1.0]})
    parquet.save_table(
        tmp_path / "a.parquet", parquet.with_run_info(table, {"device": "cpu", "torch": "2"})
    )
    parquet.save_table(
        tmp_path / "b.parquet",
        parquet.with_run_info(table, {"device": "cuda:0", "torch": "2", "device_name": "H200"}),
    )
    parquet.save_table(tmp_path / "c.parquet", table)  # a run that recorded nothing
    runs = [r for n in "abc" for r in parquet.run_records(tmp_path / f"{n}.parquet")]
    assert provenance.training_info(runs) == {
        "runs": 3,
        "devices": ["cpu", "cuda:0", "unknown"],
        "torch": ["2", "unknown"],
        "device_names": ["H200"],
    }
    assert pd.read_parquet(tmp_path / "b.parquet")["value"].tolist() == [1.0]  # rows intact


def _run_table(optimizer: str, seeds: list[int], info: dict):
    """A training job's table of every seed, with where it trained."""
    tables = [
        parquet.metrics_table(
            "fig2", optimizer, s, np.array([0, 1]), {"loss": np.array([1.0, 0.5])}
        )
        for s in seeds
    ]
    return parquet.with_run_info(pa.concat_tables(tables), info)


def test_the_aggregate_carries_the_merged_record_of_its_runs(tmp_path):
    """The figure and claims read where the runs trained from the aggregate alone: one
    record per optimizer and seed, each with its run table's backend and device."""
    kernel = {"device": "cpu", "torch": "not used", "backend": "c"}
    cuda = {"device": "cuda:0", "torch": "2.5", "backend": "torch", "device_name": "H200"}
    parquet.save_table(tmp_path / "gd.parquet", _run_table("gd", [0, 1], kernel), by_seed=True)
    parquet.save_table(tmp_path / "ngd.parquet", _run_table("ngd", [0, 1], cuda), by_seed=True)
    aggregate = parquet.concat_tables([tmp_path / "ngd.parquet", tmp_path / "gd.parquet"])
    parquet.save_table(tmp_path / "metrics.parquet", aggregate)
    records = parquet.run_records(tmp_path / "metrics.parquet")
    assert [(r["optimizer"], r["seed"], r["backend"]) for r in records] == [
        ("gd", 0, "c"),
        ("gd", 1, "c"),
        ("ngd", 0, "torch"),
        ("ngd", 1, "torch"),
    ]
    assert records[2]["device_name"] == "H200"
    assert provenance.training_info(records) == {
        "runs": 4,
        "devices": ["cpu", "cuda:0"],
        "torch": ["2.5", "not used"],
        "backends": ["c", "torch"],
        "device_names": ["H200"],
    }
    trained = provenance.trained_on(provenance.training_info(records))
    assert trained == "the compiled C kernel and torch (cpu, cuda:0)"
    # a figure job's record reads it from the aggregate it draws (provenance.collect)
    record = provenance.collect(
        figure="fig2",
        title="t",
        config={},
        source_dir=tmp_path,
        benchmark_files=[],
        run_files=[tmp_path / "metrics.parquet"],
    )
    assert record["training"] == provenance.training_info(records)


def test_device_info_names_the_resolved_device():
    from attnbias.training import devices

    assert devices.device_info(torch.device("cpu")) == {"device": "cpu", "torch": torch.__version__}


# ---- the record in the files -----------------------------------------------------------


def _unescape(literal: bytes) -> str:
    """A PDF literal string's body (between the outer parentheses), unescaped."""
    out, i = bytearray(), 0
    simple = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}
    while i < len(literal):
        c = literal[i : i + 1]
        if c != b"\\":
            out += c
            i += 1
            continue
        nxt = literal[i + 1 : i + 2]
        octal = re.match(rb"[0-7]{1,3}", literal[i + 1 : i + 4])
        if octal:
            out.append(int(octal.group(), 8))
            i += 1 + len(octal.group())
        else:
            out += simple.get(nxt, nxt)  # \( \) \\ stand for themselves
            i += 2
    return out.decode("latin-1")


def pdf_info(path) -> dict[str, str]:
    """The PDF's document Info dictionary (literal-string values), read from the raw file."""
    data = Path(path).read_bytes()
    ref = re.findall(rb"/Info\s+(\d+)\s+(\d+)\s+R", data)[-1]
    body = re.search(rb"\b%s\s+%s\s+obj\s*<<(.*?)>>\s*endobj" % ref, data, re.S).group(1)
    info, i = {}, 0
    while (key := re.compile(rb"/(\w+)\s*\(").search(body, i)) is not None:
        depth, j = 1, key.end()  # find the closing parenthesis, skipping escaped ones
        while depth:
            if body[j : j + 1] == b"\\":
                j += 2
                continue
            depth += {b"(": 1, b")": -1}.get(body[j : j + 1], 0)
            j += 1
        info[key.group(1).decode()] = _unescape(body[key.end() : j - 1])
        i = j
    return info


RECORD = {
    "figure": "figX",
    "title": "A (test) figure \\ with escapes",
    "created": "2026-01-01T00:00:00+00:00",
    "git": {"commit": "abc123", "dirty": True},
    "config_sha256": "0" * 64,
    "config": {"experiments": {"figX": {"seeds": 2, "note": 'quote " and paren )'}}},
    "packages": {"python": "3.11.7", "attnbias": "0.1.0", "snakemake": "9", "matplotlib": "3"},
    "training": {"runs": 2, "devices": ["cpu"], "torch": ["2.13.0"]},
    "wall_time_s": {"total": 1.5, "rules": {"train": {"jobs": 2, "total": 1.5, "max": 1.0}}},
}


def test_record_round_trips_through_pdf_and_png_metadata(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the custom PDF key must not warn
        provenance.savefig(fig, tmp_path / "f.pdf", "pdf", RECORD)
        provenance.savefig(fig, tmp_path / "f.png", "png", RECORD, dpi=50)
    plt.close(fig)
    info = pdf_info(tmp_path / "f.pdf")
    assert json.loads(info["Provenance"]) == RECORD
    assert info["Title"] == RECORD["title"]
    assert info["Keywords"] == (
        f"commit=abc123; dirty=true; config_sha256={'0' * 64}; devices=cpu; wall_time_s=1.5"
    )
    assert info["Creator"].startswith("attnbias 0.1.0 via Snakemake 9")
    assert "figX.provenance.json" in info["Subject"]
    text = Image.open(tmp_path / "f.png").text
    assert json.loads(text["Provenance"]) == RECORD
    assert text["Title"] == RECORD["title"] and text["Comment"] == info["Keywords"]


def test_pdf_info_parser_reads_a_plain_matplotlib_pdf(tmp_path):
    fig = plt.figure()
    fig.savefig(tmp_path / "p.pdf", metadata={"Title": "t (1)", "Author": "a\\b"})
    plt.close(fig)
    info = pdf_info(tmp_path / "p.pdf")
    assert info["Title"] == "t (1)" and info["Author"] == "a\\b"
    assert info["Producer"].startswith("Matplotlib")


# ---- the built figures -----------------------------------------------------------------


def contains(used, given) -> bool:
    """Whether `used` holds every value of `given` (dicts: recursively, keys may be added)."""
    if isinstance(given, dict):
        return isinstance(used, dict) and all(
            k in used and contains(used[k], v) for k, v in given.items()
        )
    return used == given


@pytest.mark.slow
def test_built_figures_carry_their_provenance(built_project):
    config = yaml.safe_load((built_project / "config/tiny.yaml").read_text())
    results = built_project / "results-tiny"
    for name, e in config["experiments"].items():
        sidecar = json.loads((results / f"{name}.provenance.json").read_text())
        assert json.loads(pdf_info(results / f"{name}.pdf")["Provenance"]) == sidecar
        assert json.loads(Image.open(results / f"{name}.png").text["Provenance"]) == sidecar
        # the title, and for fig9's digits a second line naming their source
        assert sidecar["figure"] == name and sidecar["title"].split("\n")[0] == e["title"]
        assert sidecar["git"] == {"commit": "unknown", "dirty": "unknown"}  # copy without .git
        # the hash is of the config values recorded, and those are the config's
        used = sidecar["config"]
        assert (
            sidecar["config_sha256"]
            == hashlib.sha256(
                json.dumps(used, sort_keys=True, separators=(",", ":")).encode()
            ).hexdigest()
        )
        assert (used["device"], used["dtype"]) == (config["device"], config["dtype"])
        # and the schema's defaults besides; paper_figure is the claims job's alone (changing
        # it reruns no figure), so a figure does not record it
        drawn = {k: v for k, v in e.items() if k != "paper_figure"}
        assert contains(used["experiments"][name], drawn)
        assert "paper_figure" not in used["experiments"][name]
        # training: every run, on the CPU with the compiled kernel (training.kernel), no torch
        runs = e["seeds"] * len(e["optimizers"])
        assert sidecar["training"] == {
            "runs": runs,
            "devices": ["cpu"],
            "torch": ["not used"],
            "backends": ["c"],
        }
        # wall times: the sums of Snakemake's own benchmark files, job by job
        walls = sidecar["wall_time_s"]["rules"]
        # one data and one svm job per experiment, one training job per optimizer (all seeds)
        jobs = {"data": 1, "svm": 1, "train": len(e["optimizers"]), "aggregate": 1}
        assert {rule: w["jobs"] for rule, w in walls.items()} == jobs
        patterns = {
            "data": f"data/{name}.tsv",
            "svm": f"svm/{name}.tsv",
            "train": f"train/{name}/*.tsv",
            "aggregate": f"aggregate/{name}.tsv",
        }
        for rule, pattern in patterns.items():
            files = sorted((results / "benchmarks").glob(pattern))
            assert len(files) == jobs[rule], pattern
            seconds = [pd.read_csv(f, sep="\t")["s"].sum() for f in files]
            assert walls[rule]["total"] == pytest.approx(sum(seconds), abs=1e-3)
            assert walls[rule]["max"] == pytest.approx(max(seconds), abs=1e-3)
        assert sidecar["packages"]["python"] == platform.python_version()
        assert sidecar["packages"]["matplotlib"] == matplotlib.__version__
        assert sidecar["packages"]["numpy"] == np.__version__
        # every input's sha256, as its bytes give it: the aggregate and the data files too
        inputs = sidecar["inputs_sha256"]
        metrics = f"results-tiny/{name}/metrics.parquet"
        data = [f"results-tiny/data/{name}.npz", f"results-tiny/svm/{name}.npz"]
        assert {metrics, *data} <= set(inputs)
        for path in (metrics, *data):
            assert inputs[path] == hashlib.sha256((built_project / path).read_bytes()).hexdigest()
        assert not [p for p in inputs if "/benchmarks/" in p]


@pytest.mark.slow
def test_the_claims_provenance_lists_its_inputs_checksums(built_project):
    record = json.loads((built_project / "results-tiny/claims.provenance.json").read_text())
    inputs = record["inputs_sha256"]
    aggregates = [p for p in inputs if p.endswith("/metrics.parquet")]
    assert aggregates and all(
        inputs[p] == hashlib.sha256((built_project / p).read_bytes()).hexdigest()
        for p in aggregates
    )
    assert any(p.startswith("results-tiny/svm/") for p in inputs)
