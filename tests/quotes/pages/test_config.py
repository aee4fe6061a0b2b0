"""config/config.yaml's registry (quotes.pages.config): the numbers its fig2 cap comments
state and the fact that the configured caps are the rule's, on a fake build; the fact
fails where a cap is not the rule's (control)."""

from __future__ import annotations

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
