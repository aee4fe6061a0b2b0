"""config/config.yaml's registry (quotes.pages.config): the numbers its fig2 cap comments
state and the fact that the configured caps are the rule's, on a fake build; the fact
fails where a cap is not the rule's (control). The other comments' numbers and facts
(Eq. 10 at lr 0.1, fig3_cond1's support vectors, the global study's small starts, the
claims' thresholds), each with a control."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from cap_builds import CAPS, LARGEST, FakeBuild

from attnbias.quotes.pages import config


def test_the_caps_fact_holds_only_for_the_rules_caps():
    fact = config.FACTS["config.fig2.caps-are-the-rules"]
    assert fact.read(FakeBuild(LARGEST, CAPS)) is True
    # controls: the old shared cap on PS, and NGD-mom's apart from NGD's, are refused by name
    with pytest.raises(ValueError, match=r"fig2.optimizers.ps.eta_max is 1e\+150.*1e\+308"):
        fact.read(FakeBuild(LARGEST, CAPS | {"ps": 1e150}))
    with pytest.raises(ValueError, match=r"ngd-mom.max_step is 1e\+150.*10\^147.66"):
        fact.read(FakeBuild(LARGEST, CAPS | {"ngd-mom": 1e150}))


def test_the_comments_numbers():
    build = FakeBuild(LARGEST, CAPS)
    largest = config.NUMBERS["fig2_uncapped.ngd.largest_step"].read(build)
    assert [round(v, 2) for v in largest] == [147.66, 131.1]
    assert config.NUMBERS["config.fig2.ngd.rule_cap"].read(build) == 1e148
    assert config.NUMBERS["config.fig2.ps.rule_cap"].read(build) == 1e308


class _Build:
    """A build of the other numbers the config's comments state: Eq. 10 at lr 0.1 and GD
    on fig3 (the robustness target's rows), fig3_cond1's support-vector fractions, the
    global-convergence study's table (written under `results`)."""

    def __init__(self, results, eq10=(0.047, 0.11), sv=(1.0, 1.0)):
        self.results, self.eq10, self.sv = results, eq10, sv

    def robustness_row(self, constant, value, key):
        assert (constant, value) == ("eq10_eta", 0.1) and key.startswith("fig3 ahead of gd eq10")
        low, high = self.eq10
        return {"value_text": f"at t = 10000, mean (min to max) over seeds: Eq. 10 0.07 "
                              f"({low} to {high}), GD 0.03 (0.02 to 0.037)"}  # fmt: skip

    def hypotheses(self, experiment):
        assert experiment == "fig3_cond1"
        return [{"cond1_sv_fraction": f} for f in self.sv]

    def path(self, relative):
        return self.results / relative


def test_eq10_at_lr_0_1_behind_gd_only_where_both_ends_are_above_gds(tmp_path):
    fact = config.FACTS["config.fig3.eq10.lr-0.1-behind-gd"]
    assert fact.target == "results/claims_robustness.md"  # not built here without it
    assert fact.read(_Build(tmp_path)) is True
    assert fact.read(_Build(tmp_path, eq10=(0.015, 0.11))) is False  # control: overlaps GD's


def test_every_sample_support_only_where_every_seed_has_all():
    fact = config.FACTS["config.fig3_cond1.every-sample-support"]
    assert fact.read(_Build(None)) is True
    assert fact.read(_Build(None, sv=(1.0, 0.8))) is False  # control: one seed short


def test_the_global_studys_small_starts_reach_by_their_latest_crossing(tmp_path):
    number = config.NUMBERS["global_convergence.example1.gd.small.reached-by"]
    assert number.target == "results/global_convergence.pdf"
    rows = [("example1", "gd", 1.0, 2984.0), ("example1", "gd", 1.0000001, 3275.0),
            ("example1", "gd", 10.0, 9999.0), ("corr1", "gd", 1.0, 8000.0),
            ("example1", "ngd", 1.0, 50.0)]  # fmt: skip
    table = pd.DataFrame(rows, columns=["setting", "optimizer", "scale", "first_iteration"])
    table.to_csv(tmp_path / "global_convergence.csv", index=False)
    assert number.read(_Build(tmp_path)) == 3275.0
    # control: a small start that never crossed leaves no "reach by"
    table.loc[0, "first_iteration"] = float("nan")
    table.to_csv(tmp_path / "global_convergence.csv", index=False)
    assert math.isnan(number.read(_Build(tmp_path)))


def test_the_claims_thresholds_are_read_from_the_code():
    from attnbias.claims import joint

    assert config.NUMBERS["claims.joint.U_GAP_MAX"].read(None) == joint.U_GAP_MAX == 1e-3
    assert config.NUMBERS["claims.joint.THM2_EXPONENT"].read(None) == joint.THM2_EXPONENT
