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
