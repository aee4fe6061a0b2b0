"""docs/real-data.md's registry (attnbias.quotes.pages.realdata) read on a hand-made real-data
build: the CPU seconds of a figure's training jobs (their benchmark files), whether the
figure runs what its sweep's rule chose (with a control), a race's outcome; every entry of an
optional target, and a figure not built is "not built", naming its target."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.quotes.build import Build, Unbuilt
from attnbias.quotes.pages.realdata import FACTS, NUMBERS, SECTIONS, race

FINAL = ["optimizer", "label", "rule", "settings", "seeds", "final_iteration",
         "final_train_loss", "final_test_accuracy", "probe_area", "cap_bound_share",
         "best_of_rule"]  # fmt: skip


def _build(tmp_path, figure_lr: str = "lr 0.3") -> Build:
    for optimizer, cpu in (("sgd", (17.0, 18.0)), ("sps", (19.0, 20.0))):
        folder = tmp_path / "benchmarks" / "train_real" / "fig6_mnist5k" / optimizer
        folder.mkdir(parents=True)
        for seed, seconds in zip((1, 2), cpu, strict=True):
            pd.DataFrame({"s": [100.0], "cpu_time": [seconds]}).to_csv(
                folder / f"seed{seed}.tsv", sep="\t", index=False
            )
    sweep = [
        ("sgd-1", "SGD 0.1", "sgd", "lr 0.1", 1, 248, 0.2, 0.9, 0.5, np.nan, False),
        ("sgd-3", "SGD 0.3", "sgd", "lr 0.3", 1, 248, 0.1, 0.9, 0.4, np.nan, True),
    ]
    figure = [("sgd", "SGD", "sgd", figure_lr, 5, 248, 0.1, 0.9, 0.4, np.nan, True)]  # fmt: skip
    pd.DataFrame(sweep, columns=FINAL).to_csv(tmp_path / "fig6_mnist5k_lr_final.csv", index=False)
    pd.DataFrame(figure, columns=FINAL).to_csv(tmp_path / "fig6_mnist5k_final.csv", index=False)
    pd.DataFrame([{"key": "fig6_mnist5k sps faster than sgd", "outcome": "undecided"}]).to_csv(
        tmp_path / "claims.csv", index=False
    )
    return Build(tmp_path)


def test_the_cpu_seconds_are_the_benchmark_files(tmp_path):
    build = _build(tmp_path)
    assert NUMBERS["fig6_mnist5k.cpu.total"].read(build) == 74.0
    assert list(NUMBERS["fig6_mnist5k.cpu.run"].read(build)) == [17.0, 20.0]
    assert NUMBERS["fig6_mnist5k.cpu.runs"].read(build) == 4
    with pytest.raises(Unbuilt):  # control: the sweep's jobs are not in this build
        NUMBERS["fig6_mnist5k_lr.cpu.total"].read(build)


def test_the_figure_runs_what_the_sweeps_rule_chose(tmp_path):
    assert FACTS["fig6_mnist5k.tuned"].read(_build(tmp_path / "a"))
    # control: a figure that kept the rate chosen before the rule
    assert not FACTS["fig6_mnist5k.tuned"].read(_build(tmp_path / "b", figure_lr="lr 0.1"))


def test_a_race_reads_its_claims_row(tmp_path):
    build = _build(tmp_path)
    assert race("fig6_mnist5k", "sps faster than sgd", "undecided").read(build)
    assert not race("fig6_mnist5k", "sps faster than sgd", "holds").read(build)  # control


def test_every_entry_names_its_optional_target():
    sources = [*NUMBERS.values(), *FACTS.values(), *(s.source for s in SECTIONS)]
    assert all(s.target and s.target.startswith("results/fig") for s in sources)
    assert len(SECTIONS) == 9  # three figures: sweep, end points, races
