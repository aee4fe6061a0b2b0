"""docs/real-data.md's generated tables (attnbias.quotes.real_tables) on a hand-made build in
the pipeline's formats: a sweep's settings with the rule's choice in bold and whether the
figure runs it, a figure's end points over seeds with its cap's bound steps, its races from
the claims table; each with a control (a planted change shows, a missing table is
"not built")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.quotes.build import Build, Unbuilt
from attnbias.quotes.real_tables import race_p, races_table, results_table, spread, sweep_table

COLUMNS = ["experiment", "optimizer", "seed", "iteration", "metric", "value"]
FINAL = ["optimizer", "label", "rule", "settings", "seeds", "final_iteration",
         "final_train_loss", "final_test_accuracy", "probe_area", "cap_bound_share",
         "best_of_rule"]  # fmt: skip


def _write(results, sps_settings="c 0.5, eta_max 0.3", sgd_final=(0.4, 0.6)):
    rows = []
    for seed, final in zip((1, 2), sgd_final, strict=True):
        for opt, scale, share in (("sgd", 1.0, np.nan), ("sps", 0.5, 0.25)):
            for step, probe, acc in ((0, 0.7, 0.5), (40, 0.6, 0.7), (80, 0.5, 0.8)):
                rows.append(("f", opt, seed, step, "probe_loss", probe * scale))
                rows.append(("f", opt, seed, step, "test_accuracy", acc))
                if step:
                    rows.append(("f", opt, seed, step, "train_loss", final * scale))
                    rows.append(("f", opt, seed, step, "cap_bound_share", share))
    table = pd.DataFrame(rows, columns=COLUMNS)
    table = table[~((table["optimizer"] == "sgd") & (table["metric"] == "cap_bound_share"))]
    (results / "f").mkdir(parents=True)
    table.to_parquet(results / "f" / "metrics.parquet")
    figure = [
        ("sgd", "SGD", "sgd", "lr 0.1", 2, 80, 0.5, 0.8, 0.6, np.nan, True),
        ("sps", "SPS", "sps", sps_settings, 2, 80, 0.25, 0.8, 0.3, 0.25, True),
    ]
    sweep = [("sgd-1", "SGD lr 0.1", "sgd", "lr 0.1", 1, 80, 0.5, 0.8, 0.6, np.nan, True),
             ("sps-1", "SPS 0.1", "sps", "c 0.5, eta_max 0.1", 1, 80, 0.3, 0.8, 0.35, 0.9,
              False),
             ("sps-3", "SPS 0.3", "sps", "c 0.5, eta_max 0.3", 1, 80, 0.25, 0.8, 0.3, 0.2,
              True)]  # fmt: skip
    pd.DataFrame(figure, columns=FINAL).to_csv(results / "f_final.csv", index=False)
    pd.DataFrame(sweep, columns=FINAL).to_csv(results / "f_lr_final.csv", index=False)
    claims = pd.DataFrame([
        {"key": "f sps faster than sgd", "kind": "race", "claim": "SPS: trains faster than SGD.",
         "low": -0.2, "high": -0.1, "mean": -0.15, "outcome": "holds",
         "verdict": "comparison: holds (not made for other data)",
         "detail": "SPS's area below SGD's by the paired t-test, one-sided p = 0.012",
         "value_text": "...; t = -4.2, one-sided p = 0.012"},
        {"key": "f adam like sgd", "kind": "threshold", "claim": "x", "low": 1, "high": 1,
         "mean": 1, "outcome": "holds", "verdict": "holds", "detail": "", "value_text": ""},
    ])  # fmt: skip
    claims.to_csv(results / "claims.csv", index=False)
    return Build(results)


def test_the_sweep_table_bolds_the_rules_choice_and_says_what_the_figure_runs(tmp_path):
    lines = sweep_table(_write(tmp_path / "a"), "f_lr", "f").splitlines()
    assert lines[2] == "| SGD | **lr 0.1** | **0.6000** | 0.500 | 0.800 | no cap | yes |"
    assert lines[3] == "| SPS | c 0.5, eta_max 0.1 | 0.3500 | 0.300 | 0.800 | 90% |  |"
    assert lines[4] == "| SPS | **c 0.5, eta_max 0.3** | **0.3000** | 0.250 | 0.800 | 20% | yes |"
    # control: a figure that runs another cap than the chosen one says so
    other = sweep_table(_write(tmp_path / "b", "c 0.5, eta_max 0.1"), "f_lr", "f")
    assert other.splitlines()[3].endswith("| 90% | yes |")
    assert other.splitlines()[4].endswith("| 20% |  |")


def test_the_results_table_gives_each_optimizer_over_its_seeds(tmp_path):
    lines = results_table(_write(tmp_path / "a"), "f").splitlines()
    assert lines[0].endswith("| cap bound (steps, seeds 1 to 2) |")
    # probe area: trapezoids (0.7 + 0.6) / 2 * 40 + (0.6 + 0.5) / 2 * 40 over 80 steps
    assert lines[2] == "| SGD | lr 0.1 | 0.500 (0.400 to 0.600) | 0.800 | 0.6000 | no cap |"
    assert lines[3] == (
        "| SPS | c 0.5, eta_max 0.3 | 0.250 (0.200 to 0.300) | 0.800 | 0.3000 | 40 of 160 |"
    )
    # control: the seeds' losses move the cell
    moved = results_table(_write(tmp_path / "b", sgd_final=(0.4, 0.8)), "f").splitlines()
    assert moved[2].startswith("| SGD | lr 0.1 | 0.600 (0.400 to 0.800) |")


def test_the_races_table_reads_the_claims_rows_of_its_figure_only(tmp_path):
    build = _write(tmp_path / "a")
    lines = races_table(build, "f").splitlines()
    assert len(lines) == 3  # the threshold row is not a race
    assert lines[2] == (
        "| SPS: trains faster than SGD. | -0.1500 (-0.2000 to -0.1000) | 0.012 | comparison: "
        "holds (not made for other data); SPS's area below SGD's by the paired t-test, "
        "one-sided p = 0.012 |"
    )
    with pytest.raises(Unbuilt):  # control: a figure without race rows
        races_table(build, "g")
    assert race_p("one seed: no paired test") == ""


def test_spread_writes_one_value_where_the_seeds_agree():
    assert spread([0.5, 0.5]) == "0.500"
    assert spread([0.4, 0.6]) == "0.500 (0.400 to 0.600)"
