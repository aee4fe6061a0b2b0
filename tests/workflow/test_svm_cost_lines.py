"""The svm_geometry jobs' cost lines (attnbias.workflow.svm_cost_lines)."""

from __future__ import annotations

import pytest

from attnbias.svm import cost
from attnbias.workflow import svm_cost_lines

DM = {
    "data": {"model": "dm", "params": {"n": 20, "T": 5, "d": 100}},
    "seeds": 5,
    "norms": list(cost.TABLE_NORMS),
}


def test_a_long_svm_job_is_announced_and_a_short_one_is_not():
    """The d = 4096 experiment of the issue: its estimate said before the job starts."""
    small = {**DM, "seeds": 1, "data": {"model": "dm", "params": {"n": 4, "T": 3, "d": 12}}}
    assert svm_cost_lines.experiment_seconds(small) < cost.ANNOUNCE_SECONDS
    assert svm_cost_lines.announcement("small", small) is None
    big = {**DM, "data": {"model": "dm", "params": {"n": 20, "T": 5, "d": 4096}}}
    line = svm_cost_lines.announcement("big", big)
    assert line.startswith("svm_geometry of experiment big: about ")
    assert "at d = 4096, n (T - 1) = 80 constraints" in line
    minutes = float(line.split("about ")[1].split(" min")[0])
    assert minutes == pytest.approx(svm_cost_lines.experiment_seconds(big) / 60, abs=0.5)


def _neighbours() -> dict:
    import yaml
    from project import REPO

    return yaml.safe_load((REPO / "config/config.yaml").read_text())["neighbours"]


@pytest.mark.parametrize("rule", ["tfsvm_rank_table", "attentionmd_local_run"])
def test_the_neighbours_long_jobs_are_announced_at_their_configured_sizes(rule):
    """Their minutes-long jobs say their estimate before they start (issue 61, point 5); at
    the measured sizes the estimate is the measured cost."""
    section, per_seed = svm_cost_lines.NEIGHBOURS_PER_SEED[rule]
    settings = _neighbours()[section]
    seconds = svm_cost_lines.neighbours_seconds(rule, settings)
    assert seconds == pytest.approx(settings["seeds"] * per_seed)
    line = svm_cost_lines.neighbours_announcement(rule, settings)
    assert line.startswith(f"{rule} (neighbours.{section}): about ")
    assert f"({settings['seeds']} seeds;" in line


def test_a_short_neighbours_job_is_not_announced_and_the_cost_follows_the_size():
    """The control: two seeds of the rank grid, or the cheap tfsvm_local runs, say nothing;
    a grid of twice the cells costs twice as much."""
    rank = {**_neighbours()["tfsvm_rank"], "seeds": 2}
    assert svm_cost_lines.neighbours_announcement("tfsvm_rank_table", rank) is None
    local = _neighbours()["tfsvm_local"]
    assert svm_cost_lines.neighbours_announcement("tfsvm_local_run", local) is None
    doubled = {**rank, "d": rank["d"] * 2}
    assert svm_cost_lines.neighbours_seconds("tfsvm_rank_table", doubled) == pytest.approx(
        2 * svm_cost_lines.neighbours_seconds("tfsvm_rank_table", rank)
    )
