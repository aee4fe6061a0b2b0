"""Sweeps: the grid and its point names (attnbias.studies.sweep_grid), the metrics and claims
registries, one point's runs (sweep_runs), the tables (sweep), the config's refusals
(sweepcheck), and Snakemake's plan: one job per point, only new points built, a change to
the base experiment reruns the points it changes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from project import copy_project, planned_jobs, snakemake
from tiny_sweep import tiny

from attnbias.studies.sweep_config import SweepConfig
from attnbias.workflow import parquet, store

SWEEP_TARGET = "results-tiny/sweeps/fig3.pdf"


def with_sweep(change) -> dict:
    config = tiny()
    change(config["sweeps"]["fig3"])
    return config


# ---- the workflow's plan ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("sweep"))


def write(project: Path, config: dict, name: str = "case.yaml") -> str:
    path = project / "config" / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return f"config/{name}"


def test_one_job_per_point_one_summary_and_none_in_rule_all(project):
    points = len(SweepConfig(tiny()).points("fig3"))
    config = write(project, tiny())
    plan = planned_jobs(project, config=config, target=SWEEP_TARGET)
    assert plan == {"sweep_point": points, "sweep_summary": 1}
    alias = planned_jobs(project, config=config, target="results-tiny/fig3_sweep.pdf")
    assert alias == {"sweep_point": points, "sweep_summary": 1, "fig3_sweep": 1}
    assert "sweep_point" not in planned_jobs(project, config=config)


def test_a_bad_sweep_fails_before_any_job(project):
    config = with_sweep(lambda s: s["grid"].update({"optimizers.ngd.max_stepp": [1.0]}))
    result = snakemake(project, "-n", SWEEP_TARGET, config=write(project, config), check=False)
    assert result.returncode != 0
    assert "sweeps.fig3.grid.optimizers.ngd.max_stepp" in result.stdout + result.stderr


@pytest.mark.slow
def test_a_new_point_builds_alone_and_a_base_change_reruns_what_it_changes(project):
    """Build the tiny sweep, then plan: a new d builds its two points only; the base's ngd lr
    (swept, so no point reads it) reruns nothing; the base's n reruns every point."""
    snakemake(project, "-c1", SWEEP_TARGET, config=write(project, tiny(), "sweep.yaml"))
    points = len(SweepConfig(tiny()).points("fig3"))
    assert planned_jobs(project, config="config/sweep.yaml", target=SWEEP_TARGET) == {}

    def plan(change) -> dict:
        config = tiny()
        change(config)
        # edited in place: results-tiny belongs to config/sweep.yaml now (one owner)
        return planned_jobs(
            project, config=write(project, config, "sweep.yaml"), target=SWEEP_TARGET
        )

    added = plan(lambda c: c["sweeps"]["fig3"]["grid"]["data.params.d"].append(20))
    assert added == {"sweep_point": 2, "sweep_summary": 1}
    relabel = plan(lambda c: c["experiments"]["fig3"]["optimizers"]["ngd"].update(label="N"))
    assert relabel.get("sweep_point", 0) == 0
    swept = plan(lambda c: c["experiments"]["fig3"]["optimizers"]["ngd"].update(lr=0.5))
    assert swept.get("sweep_point", 0) == 0
    base = plan(lambda c: c["experiments"]["fig3"]["data"]["params"].update(n=5))
    assert base == {"sweep_point": points, "sweep_summary": 1}
    gd = plan(lambda c: c["experiments"]["fig3"]["optimizers"]["gd"].update(lr=0.5))
    assert gd == {"sweep_point": points, "sweep_summary": 1}

    # a point's file copied over another's: the summary refuses it by path
    config = write(project, tiny(), "sweep.yaml")
    names = list(SweepConfig(tiny()).points("fig3"))
    folder = project / "results-tiny/sweeps/fig3/points"
    (folder / f"{names[1]}.parquet").write_bytes((folder / f"{names[0]}.parquet").read_bytes())
    result = snakemake(
        project, "-c1", SWEEP_TARGET, "--forcerun", SWEEP_TARGET, "--rerun-triggers", "mtime",
        config=config, check=False,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"points/{names[1]}.parquet holds kind sweep point, experiment fig3, setting" in out


def test_a_point_file_of_another_point_is_refused_by_path(tmp_path):
    """The trial's case: a point's file copied over another's (pandas' "Index contains
    duplicate entries" in the summary before): each point file records its sweep, point
    and the sha256 of its experiment, and the summary reads it against its path's."""
    import pyarrow as pa

    sweeps = SweepConfig(tiny())
    first, second = list(sweeps.points("fig3"))[:2]
    identities = sweeps.identities("fig3")
    assert identities[first] != identities[second]
    table = pa.Table.from_pandas(pd.DataFrame({"point": [first], "x": [1.0]}))
    path = tmp_path / f"{second}.parquet"  # the first point's file, at the second's path
    parquet.save_table(path, parquet.with_identity(table, identities[first]))
    assert parquet.load_frame(tmp_path / f"{second}.parquet", identities[first]) is not None
    with pytest.raises(store.FileContractError) as err:
        parquet.load_frame(path, identities[Path(path).stem])
    message = str(err.value)
    assert message.startswith(f"{path} holds kind sweep point, experiment fig3, setting {first}")
    assert f"setting {second}" in message and "--forcerun" in message
