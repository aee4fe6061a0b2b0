"""The sweeps' config checks (attnbias.studies.sweep_check)."""

from __future__ import annotations

import pytest
from project import checked_config
from tiny_sweep import tiny

from attnbias.workflow import configkeys

# ---- the config's refusals ------------------------------------------------------------------


checked = checked_config


def with_sweep(change) -> dict:
    config = tiny()
    change(config["sweeps"]["fig3"])
    return config


def test_the_tiny_sweep_passes():
    checked(tiny())


@pytest.mark.parametrize(
    "change, key, words",
    [
        (
            lambda s: s["grid"].update({"optimizers.ngd.max_stepp": [1.0]}),
            "sweeps.fig3.grid.optimizers.ngd.max_stepp",
            "unknown key path",
        ),
        (
            lambda s: s["grid"].update({"optimizers.ngd.max_step": [1.0]}),
            "sweeps.fig3.grid.optimizers.ngd.max_step",
            "base experiment has no key 'max_step'",
        ),
        (lambda s: s.update(grid={}), "sweeps.fig3.grid", "the grid is empty"),
        (
            lambda s: s["grid"].update({"data.params.d": []}),
            "sweeps.fig3.grid.data.params.d",
            "should be non-empty",
        ),
        (
            lambda s: s["grid"].update(
                {"data.params.d": list(range(1, 400)), "data.params.n": list(range(1, 400))}
            ),
            "sweeps.fig3.grid",
            "exceed the limit of 100000",
        ),
        (
            lambda s: s["grid"].update({"data.params.d": [12, -1]}),
            "sweeps.fig3.grid.data.params.d",
            "value (-1,)",
        ),
        (
            lambda s: s["grid"]["zip"].update({"optimizers.joint-ngd.lr": [0.1]}),
            "sweeps.fig3.grid.zip",
            "one length",
        ),
        (lambda s: s.update(base="fig33"), "sweeps.fig3.base", "not an experiment"),
        (  # the trial's case: Snakemake's PeriodicWildcardError, naming no key, before
            lambda s: s["grid"].update({"optimizers.gd.label": ["GD", "x" + "ab" * 20]}),
            "sweeps.fig3.grid.optimizers.gd.label[1]",
            "which ends in 'ab' repeated: Snakemake refuses such a file name",
        ),
        (
            lambda s: s["grid"].update(
                {"zip": {"optimizers.gd.label": ["GD", "=" * 30], "optimizers.gd.lr": [1, 2]}}
            ),
            "sweeps.fig3.grid.zip.optimizers.gd.label[1]",
            "PeriodicWildcardError",
        ),
        (
            lambda s: s["grid"].update({"optimizers.gd.label": ["GD", "G/D"]}),
            "sweeps.fig3.grid.optimizers.gd.label[1]",
            "value 'G/D' holds '/', so it cannot be part of a point's file names",
        ),
        (
            lambda s: s["grid"].update({"optimizers.gd.label": ["GD", ".."]}),
            "sweeps.fig3.grid.optimizers.gd.label[1]",
            "is empty or only dots",
        ),
        (
            lambda s: s.update(optimizers=["gd", "adam"]),
            "sweeps.fig3.optimizers[1]",
            "'adam' is no optimizer of the base",
        ),
        (
            lambda s: s.update(optimizers=["gd", "ngd"]),  # its grid sets joint-ngd's lr
            "sweeps.fig3.grid.zip.optimizers.joint-ngd.lr",
            "has no key 'joint-ngd' under optimizers",
        ),
        (lambda s: s["metrics"].append("final_gap"), "sweeps.fig3.metrics[2]", "unknown metric"),
        (
            lambda s: s["claims"].update(x={"claim": "fastest-ish"}),
            "sweeps.fig3.claims.x.claim",
            "unknown claim",
        ),
        (
            lambda s: s["claims"].update(x={"claim": "fastest", "optimizer": "ps"}),
            "sweeps.fig3.claims.x",
            "missing ['metric']",
        ),
        (
            lambda s: s["claims"].update(
                x={"claim": "fastest", "optimizer": "adam", "metric": "final_log_loss"}
            ),
            "sweeps.fig3.claims.x.optimizer",
            "no optimizer of the base",
        ),
    ],
)
def test_a_bad_sweep_is_refused_naming_its_key(change, key, words):
    with pytest.raises(configkeys.ConfigError) as err:
        checked(with_sweep(change))
    assert err.value.key == key, str(err.value)
    assert words in str(err.value)
