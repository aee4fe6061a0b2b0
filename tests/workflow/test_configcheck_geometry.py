"""The geometry experiments' config checks (attnbias.workflow.configcheck_geometry)."""

from __future__ import annotations

import copy

import pytest
from tiny_configs import checked_tiny_geometry

from attnbias.workflow import configcheck_geometry, configcheck_optimizers, configkeys


def _check(cfg: dict) -> None:
    """check_geometry as the workflow runs it: on the optimizers resolved by check_specs."""
    configcheck_geometry.check_geometry(cfg, configcheck_optimizers.check_specs(cfg))


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (lambda e: e.update(norms=["fro", "l1"]), "norms[1]", "l1"),
        (lambda e: e.update(norms=["fro", "l3.0"]), "norms[1]", "'l3'"),
        (lambda e: e.update(norms=["fro", "max", "spectral", "l3"]), "norms", "nuclear"),
        (lambda e: e.pop("norms"), "norms", "names its norms"),
    ],
)
def test_bad_norms_are_refused_naming_the_key(change, key, words):
    cfg = checked_tiny_geometry()
    change(cfg["experiments"]["geometry_example1"])
    with pytest.raises(configkeys.ConfigError) as err:
        _check(cfg)
    assert err.value.key == f"experiments.geometry_example1.{key}"
    assert words in str(err.value)


def test_norms_on_another_layout_are_refused():
    cfg = checked_tiny_geometry()
    other = copy.deepcopy(cfg["experiments"]["geometry_example1"])
    other["layout"] = "fixed_decoder"
    cfg["experiments"]["fig"] = other
    with pytest.raises(configkeys.ConfigError, match="norms belong to layout geometry"):
        _check(cfg)


def test_a_tuning_seed_among_the_reported_seeds_is_refused():
    """The seed that chose the step lengths is never reported: tuning_seed below first_seed."""
    cfg = checked_tiny_geometry()
    e = cfg["experiments"]["geometry_example1"]
    e.update(first_seed=1, tuning_seed=0)
    _check(cfg)  # below the reported seeds: accepted
    e.update(tuning_seed=1)
    with pytest.raises(configkeys.ConfigError) as err:
        _check(cfg)
    assert err.value.key == "experiments.geometry_example1.tuning_seed"
    assert "first_seed (1) must be above it" in str(err.value)


def test_a_geometry_experiment_past_the_limit_on_d_is_refused_with_its_estimate():
    """d = 4096 was inside the documented limit and ran its SVMs for minutes unannounced;
    the limit of an experiment with norms is the largest d whose SVMs were measured within
    minutes a seed. The control: d at the limit is accepted."""
    from attnbias.svm import cost

    cfg = checked_tiny_geometry()
    params = cfg["experiments"]["geometry_example1"]["data"]["params"]
    params["d"] = cost.MAX_NORMS_D
    _check(cfg)
    params["d"] = cost.MAX_NORMS_D + 1
    with pytest.raises(configkeys.ConfigError, match=f"is above {cost.MAX_NORMS_D}"):
        _check(cfg)
    params["d"] = 4096
    with pytest.raises(configkeys.ConfigError) as err:
        _check(cfg)
    assert err.value.key == "experiments.geometry_example1.data.params.d"
    assert f"4096 is above {cost.MAX_NORMS_D}" in str(err.value)
    assert "CPU-minutes a seed" in str(err.value)


def test_tokens_selected_is_a_fixed_decoder_geometry_setting_refused_elsewhere_by_its_key():
    """`tokens: selected` passes on a geometry experiment with a fixed decoder (the
    control); with u trained, or on another layout, it is refused naming the key."""
    cfg = checked_tiny_geometry()
    cfg["experiments"]["geometry_example1"]["tokens"] = "selected"
    _check(cfg)  # fixed decoder: accepted
    dm = cfg["experiments"]["geometry_dm"]
    dm["tokens"] = "selected"
    with pytest.raises(configkeys.ConfigError) as err:
        _check(cfg)
    assert err.value.key == "experiments.geometry_dm.tokens"
    assert "train.train_u false" in str(err.value)
    dm.pop("tokens")
    other = copy.deepcopy(cfg["experiments"]["geometry_example1"])
    other.pop("norms")
    other["layout"] = "fixed_decoder"
    cfg["experiments"]["fig"] = other
    with pytest.raises(configkeys.ConfigError) as err:
        _check(cfg)
    assert err.value.key == "experiments.fig.tokens"
    assert "tokens belong to layout geometry" in str(err.value)
