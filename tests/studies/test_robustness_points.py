"""The robustness of the claims beyond the paper to the geometry experiments' constants (each
step length, Adam's beta2 and eps: config `claims_robustness`, constants geometry_*): on a
tiny geometry experiment trained here, a constant retrains only its optimizer, with the
measures the train jobs log (one helper, svm_geometry_file.GeometrySVMs), and gives the
beyond rows their range; the workflow's reading of such a constant and its checks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnbias.claims import robustness
from attnbias.claims.inputs import ExperimentInputs
from attnbias.data import hypotheses, models
from attnbias.optim.spec import config_settings, spec_of
from attnbias.studies import robustness_points
from attnbias.svm import geometry, max_margin
from attnbias.training import geometry_measures as measures
from attnbias.workflow.config import canonical
from attnbias.workflow.svm_geometry_file import GeometrySVMs

BACKEND = {"device": "cpu", "dtype": "float64"}


NORMS = ["fro", "max", "l3"]


OPTIMIZERS = {
    "gd": {"rule": "gd", "lr": 1.0},
    "sign": {"rule": "sign", "lr": 0.05, "schedule": "sqrt"},
    "adam": {"rule": "adam", "lr": 0.05, "schedule": "sqrt"},
}


SETTINGS = {
    "geo": {
        "layout": "geometry",
        "seeds": 2,
        "paper_figure": None,
        "labels": {"gd": "GD", "sign": "sign descent", "adam": "Adam"},
        "norms": NORMS,
        "dataset": "example1",
        "data": "example1",
        "train": {
            "iterations": 60,
            "log_points": 8,
            "grid": "log",
            "loss": "exponential",
            "train_u": False,
        },  # fmt: skip
        "optimizers": {n: canonical(config_settings(o)) for n, o in OPTIMIZERS.items()},
    }
}


BETA2 = {"geo": ["optimizers.adam.beta2"]}


@pytest.fixture(scope="module")
def tiny_geometry() -> dict[str, ExperimentInputs]:
    """A tiny geometry experiment (Example 1, n = 4, T = 3, d = 6, two seeds): its data,
    SVMs in each norm and every run, trained as robustness_points trains them."""
    datasets = {s: models.generate("example1", s, {"n": 4, "T": 3, "d": 6}) for s in range(2)}
    solutions = {
        s: max_margin.to_arrays(max_margin.solve_for_dataset(d, False, name=f"seed {s}"))
        for s, d in datasets.items()
    }
    found = {}
    for s, d in datasets.items():
        solved, faces, _ = geometry.timed_solve(d, NORMS, False, f"seed {s}")
        found[s] = geometry.to_arrays(solved, faces)
    reports = [
        {**hypotheses.report(datasets[s]), **hypotheses.svm_report(datasets[s], solutions[s])}
        for s in datasets
    ]
    empty = pd.DataFrame(columns=["experiment", "optimizer", "seed", "iteration", "metric",
                                  "value"])  # fmt: skip
    base = ExperimentInputs(empty, datasets, solutions, reports, None,
                            GeometrySVMs.of(found, NORMS, False))  # fmt: skip
    trained = robustness_points.train("geo", SETTINGS["geo"], base, list(OPTIMIZERS), **BACKEND)
    return {"geo": trained}


@pytest.fixture(scope="module")
def beta2_points(tiny_geometry) -> pd.DataFrame:
    return robustness_points.points(BETA2, [0.5, 0.999], 0.999, SETTINGS, tiny_geometry, **BACKEND)


def test_retrained_runs_log_the_measures_the_train_jobs_log(tiny_geometry):
    inputs = tiny_geometry["geo"]
    table = inputs.table
    for opt in OPTIMIZERS:
        metrics = set(table.loc[table["optimizer"] == opt, "metric"])
        assert {f"{p}_{n}" for p in ("align", "margin_ratio", "face_cos") for n in NORMS} <= metrics
    # the hook is the measures' own, probing a new token set in the optimizer's expected norm
    seeds, sign = list(inputs.datasets), spec_of(SETTINGS["geo"]["optimizers"]["sign"], real=False)
    hook = inputs.geometry.extra_metrics(inputs.datasets, seeds, sign)
    direct = measures.extra_metrics(
        [inputs.datasets[s] for s in seeds], [inputs.geometry.solutions[s] for s in seeds],
        NORMS, False, faces=[inputs.geometry.faces[s] for s in seeds],
        probe=(sign.implicit_norm(),),
    )  # fmt: skip
    W = np.stack([inputs.geometry.solutions[s]["max"] for s in seeds])
    u = np.stack([inputs.datasets[s]["u"] for s in seeds]) if "u" in inputs.datasets[0] else None
    for name, values in hook(W, u).items():
        np.testing.assert_array_equal(values, direct(W, u)[name])
    # the same settings trained again give the same numbers, bit for bit
    again = robustness_points.train("geo", SETTINGS["geo"], inputs, ["adam"], **BACKEND)
    pd.testing.assert_frame_equal(again.table, inputs.table)


def test_a_geometry_constant_retrains_only_its_optimizer_and_measures_the_beyond_rows(
    tiny_geometry, beta2_points
):
    point = robustness_points.point_settings(BETA2, SETTINGS, 0.5)["geo"]
    assert robustness_points.retrained(SETTINGS["geo"], point) == ["adam"]
    ours = beta2_points[beta2_points["value"] == 0.999].set_index("key")
    other = beta2_points[beta2_points["value"] == 0.5].set_index("key")
    beyond = [k for k in ours.index if k.endswith(("own norm first", "own margin"))]
    assert {f"geo {o} own norm first" for o in OPTIMIZERS} <= set(beyond)
    # the other optimizers' rows are the same numbers at both values; Adam's moved
    columns = ["outcome", "mean", "low", "high", "value_text"]
    for key in beyond:
        if " adam " not in key:
            pd.testing.assert_series_equal(ours.loc[key, columns], other.loc[key, columns])
    assert any(
        (ours.loc[k, ["mean", "low", "high"]] != other.loc[k, ["mean", "low", "high"]]).any()
        for k in beyond
        if " adam " in k
    )
    constant = robustness.Constant("beta2", "Adam's beta2", 0.999, (0.5, 0.999), (0.9, 0.999))
    found = robustness.compare(constant, beta2_points)
    assert len(found) and found["key"].str.contains(" adam ").all()
    # the claims' column gives each such row its range
    claims = robustness.annotate(robustness_points.measure(SETTINGS, tiny_geometry), found)
    cells = claims.set_index("key")["robustness"]
    for _, row in found.iterrows():
        assert cells[row["key"]].startswith(f"Adam's beta2 = 0.999 (ours): {row['range']}")
    assert not cells[[k for k in beyond if " adam " not in k]].any()
    # and the section beyond the paper counts them in a line of its own
    fragile = int(found["fragile"].sum())
    line = f"{len(found)} verdicts depend on constants we chose, {fragile} fragile"
    assert line in robustness.summary(claims, "we chose")


def test_ours_is_reused_only_where_no_run_changes(monkeypatch):
    """A constant moving two caps together (fig2's: PS 1e308, NGD 1e148) changes NGD's run
    at ours' value (1e308): that point is measured, not the default table reused. Control:
    a one-value constant at ours changes nothing and reuses it."""
    measured, trained = [], []
    table = pd.DataFrame({"key": ["e row"], "outcome": ["holds"]})
    for name in robustness_points.COLUMNS:
        table[name] = table.get(name, 0)

    def fake_measure(settings, inputs):
        measured.append(canonical(settings))
        return table.copy()

    def fake_train(name, settings, inputs, optimizers, **backend):
        trained.append(list(optimizers))
        return inputs

    monkeypatch.setattr(robustness_points, "measure", fake_measure)
    monkeypatch.setattr(robustness_points, "train", fake_train)
    caps = {"ps": {"eta_max": 1e308}, "ngd": {"max_step": 1e148}}
    settings = {"e": {"train": {"iterations": 10}, "optimizers": caps}}
    inputs = {"e": type("I", (), {"datasets": {0: None}})()}
    together = {"e": ["optimizers.ps.eta_max", "optimizers.ngd.max_step"]}
    robustness_points.points(together, [1e148, 1e308], 1e308, settings, inputs)
    assert trained == [["ps"], ["ngd"]]  # each point retrains the runs it moves
    assert len(measured) == 3  # ours, then both points (1e308 moved NGD's cap)
    measured.clear()
    robustness_points.points({"e": ["optimizers.ps.eta_max"]}, [1e148, 1e308], 1e308,
                             settings, inputs)  # fmt: skip
    assert len(measured) == 2  # ours, then 1e148; 1e308 is ours, reused
