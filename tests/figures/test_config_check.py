"""The layouts' needs checked against the data models' decoders by key, before any job
(attnbias.figures.config_check): DM's data hold no decoder, so its experiment trains u;
each layout's panels draw metrics its runs log (issue 61: fig8 on DM passed every check and
its svm job died with KeyError 'u_mm')."""

from __future__ import annotations

import pytest
import yaml
from project import REPO, checked_config
from tiny_configs import tiny

from attnbias.figures.config_check import check_decoders, missing_metrics
from attnbias.figures.panels import PANELS
from attnbias.workflow.configkeys import ConfigError

DM = {"model": "dm", "params": {"n": 6, "T": 3, "d": 12}}


def _checked(change) -> None:
    config = tiny()
    change(config["experiments"])
    checked_config(config)


@pytest.mark.parametrize("name", ["config.yaml", "tiny.yaml", "tiny_geometry.yaml"])
def test_the_shipped_configs_pass(name):
    checked_config(yaml.safe_load((REPO / "config" / name).read_text()))


@pytest.mark.parametrize(
    ("change", "key", "advice"),
    [
        # fig8 (layout bad_init) on DM: its layout draws what a trained u logs
        (lambda e: e["fig8"].update(data=DM), "experiments.fig8.train.train_u",
         "set train.train_u: true"),
        (lambda e: e["fig3"]["train"].update(train_u=False), "experiments.fig3.train.train_u",
         "set train.train_u: true"),
        # fig2 (fixed_decoder) on DM: its layout draws the excess loss of a fixed decoder
        (lambda e: e["fig2"].update(data=DM), "experiments.fig2.data.model",
         "two_token), e.g. example1"),
    ],
)  # fmt: skip
def test_a_data_model_without_a_decoder_is_refused_unless_u_trains(change, key, advice):
    with pytest.raises(ConfigError, match=f"config key {key}: data model dm holds no decoder u"):
        _checked(change)
    with pytest.raises(ConfigError) as refused:
        _checked(change)
    assert str(refused.value).endswith(advice)


def test_a_layout_is_refused_where_its_runs_do_not_log_what_it_draws():
    config = tiny()
    fig9 = config["experiments"]["fig9"]  # fixed_decoder, no f_star: 'opt' optimizer
    fig9["train"]["train_u"] = True
    refusal = (
        r"experiments\.fig9\.train\.train_u: layout fixed_decoder draws "
        r"\['log_excess_loss'\].*set train\.train_u: false"
    )
    with pytest.raises(ConfigError, match=refusal):
        checked_config(config)
    config = tiny()
    config["experiments"]["fig3"]["layout"] = "fixed_decoder"  # DM, u trained
    refusal = (
        r"experiments\.fig3\.layout: layout fixed_decoder draws .*\(joint, bad_init, two_token\)"
    )
    with pytest.raises(ConfigError, match=refusal):
        checked_config(config)


def test_the_layouts_needs_are_read_from_the_panels_and_the_logged_metrics():
    assert missing_metrics("joint", False) == ["gap_u"]
    assert missing_metrics("fixed_decoder", True) == ["log_excess_loss"]
    assert missing_metrics("bad_init", True) == missing_metrics("bad_init", False) == []
    assert missing_metrics("geometry", False) == []  # no panels of its own
    assert set(PANELS) >= {"fixed_decoder", "joint", "bad_init", "bad_init_2d", "two_token"}


def test_the_check_reads_train_u_from_the_filled_in_config():
    config = tiny()
    config["experiments"]["fig8"]["data"] = DM
    config["experiments"]["fig8"]["train"]["train_u"] = True  # the control: u trains
    checked_config(config)
    check_decoders(config)
