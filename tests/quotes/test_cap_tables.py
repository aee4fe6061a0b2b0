"""quotes.cap_tables: docs/regime.md's fig2 cap tables, generated from the uncapped runs'
largest step over every step (max_log_step_W): the rule's caps beside the config's, the
largest logged steps beside every step's, and where each cap of the ladder binds."""

from __future__ import annotations

from cap_builds import CAPS, LARGEST, FakeBuild

from attnbias.quotes import cap_tables


def test_the_rule_table_reads_every_step_and_sets_the_rule_beside_the_config():
    text = cap_tables.section(FakeBuild(LARGEST, CAPS))
    assert text.startswith(cap_tables.START) and text.endswith(cap_tables.END)
    lines = text.splitlines()
    ngd = next(line for line in lines if line.startswith("| `max_step`"))
    # every step: 10^131.10 to 10^147.66; the logged ones (to t = 100) a tenth of it
    assert "| 131.10 to 147.66 | 13.11 to 14.77 | 1e148 | 1e148 |" in ngd
    ps = next(line for line in lines if line.startswith("| `eta_max`"))
    assert ps.endswith("| 1e308 | 1e308 |")  # beyond float64: its largest power of ten
    # control: a config cap other than the rule's shows beside it
    wrong = cap_tables.section(FakeBuild(LARGEST, CAPS | {"ngd": 1e150, "ngd-mom": 1e150}))
    assert "| 1e148 | 1e150 |" in wrong


def test_the_ladder_says_where_each_cap_binds():
    lines = cap_tables.section(FakeBuild(LARGEST, CAPS)).splitlines()
    row = {line.split(" | ")[0]: line for line in lines if line.startswith("| 1e")}
    # steps grow linearly in t to their largest at t = 1000
    assert row["| 1e148"] == "| 1e148 | never | 100 to 1,000 | 100 |"
    assert row["| 1e140"] == "| 1e140 | 1,000 (1 of 2 seeds) | 100 to 1,000 | 100 |"
    assert row["| 1e2"] == "| 1e2 | 100 | 10 | 10 |"
