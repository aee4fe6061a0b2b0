"""Every count the README states is measured here, so that the README cannot drift: the
default build's jobs (a dry run from clean), the tests and the slow tests (pytest's
collection), the default config's seeds and iterations, the fig3 sweep's settings. Dated
timings are measurements of their day and stay as they are (docs/speed.md has the details).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from project import REPO, copy_project, planned_jobs

from attnbias.quotes import marks
from attnbias.studies import sweep_grid

README = marks.rendered((REPO / "README.md").read_text())  # the numbers, not their markers
CONFIG = yaml.safe_load((REPO / "config/config.yaml").read_text())

pytestmark = pytest.mark.slow


def stated(pattern: str) -> int:
    """The one number that `pattern` (a regex with one group) finds in the README."""
    found = re.findall(pattern, README)
    assert len(found) == 1, f"the README states {pattern!r} {len(found)} times: {found}"
    return int(found[0].replace(",", ""))


def test_the_default_builds_job_count(tmp_path: Path):
    jobs = planned_jobs(copy_project(tmp_path), config="config/config.yaml")
    assert stated(r"\((\d+) jobs, about") == sum(jobs.values()), jobs


def test_the_test_counts():
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    counts = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", result.stdout)
    assert counts, result.stdout[-2000:] + result.stderr[-2000:]
    fast, slow = int(counts[1]), int(counts[3])
    assert stated(r"into a temporary copy\): (\d+) tests") == fast
    assert stated(r"adds the (\d+) slow ones") == slow


def test_the_default_configs_seeds_and_iterations():
    default = {n: e for n, e in CONFIG["experiments"].items() if e.get("default_build", True)}
    # the geometry experiments (beyond the paper, a target of their own) are stated apart
    geometry = [e for e in CONFIG["experiments"].values() if e["layout"] == "geometry"]
    assert not any(e["layout"] == "geometry" for e in default.values())
    assert {e["train"]["iterations"] for e in geometry} == {3 * 10**4}
    assert re.search(r"3·10⁴ iterations, seeds \d+ to \d+ \(seed 0 of Example 1", README)
    assert {e["first_seed"] for e in geometry} == {stated(r"iterations, seeds (\d+) to")}
    last = {e["first_seed"] + e["seeds"] - 1 for e in geometry}
    assert last == {stated(r"iterations, seeds \d+ to (\d+) \(seed 0")}
    seeds = {e["seeds"] for e in default.values()}
    two_token = CONFIG["experiments"]["gd_vs_ngd"]["train"]["iterations"]
    others = {e["train"]["iterations"] for e in default.values()} - {two_token}
    assert stated(r"Default config: (\d+) seeds") == max(seeds)
    assert stated(r"seeds \((\d+) for fig3_cond1") == default["fig3_cond1"]["seeds"]
    assert stated(r", (\d+) for the deterministic") == min(seeds)
    assert re.search(r"example\), 10⁴\s+iterations \(3·10⁴ for the two-token", README)
    assert others == {10**4} and two_token == 3 * 10**4


def test_the_fig3_sweeps_settings():
    settings = sweep_grid.size(CONFIG["sweeps"]["fig3"]["grid"])
    assert stated(r"holds, over\s+(\d+) settings") == settings
    assert stated(r"in all (\d+)\s+settings of the fig3 sweep") == settings


def test_a_number_stated_twice_or_never_is_refused(monkeypatch):
    """Negative control of `stated`: an ambiguous or missing statement fails."""
    monkeypatch.setattr(sys.modules[__name__], "README", "(242 jobs, about) (241 jobs, about)")
    with pytest.raises(AssertionError, match="2 times"):
        stated(r"\((\d+) jobs, about")
    monkeypatch.setattr(sys.modules[__name__], "README", "no number here")
    with pytest.raises(AssertionError, match="0 times"):
        stated(r"\((\d+) jobs, about")


# ---- the other documents: no test count but the README's, every rule listed where the
# rules are listed (config/README.md)

DOCS = [REPO / "config/README.md", *sorted((REPO / "docs").glob("*.md"))]
TEST_COUNT = re.compile(r"(\d[\d,]*) (?:tests|passed|skipped|selected|deselected|slow ones)\b")


def test_no_document_states_a_test_count_the_readme_does_not():
    """docs/speed.md quoted "836 passed, 31 skipped" while the README said 1,507 tests."""
    counts = {stated(r"into a temporary copy\): (\d+) tests"), stated(r"adds the (\d+) slow ones")}
    for doc in DOCS:
        text = marks.rendered(doc.read_text())
        found = {int(n.replace(",", "")) for n in TEST_COUNT.findall(text)}
        assert found <= counts, f"{doc.relative_to(REPO)} states test counts {found - counts}"


def test_the_count_pattern_catches_the_old_quote():
    """The negative control: the quote docs/speed.md had."""
    assert TEST_COUNT.findall("(836 passed, 31 skipped: 29") == ["836", "31"]


def _listed(text: str, before: str) -> list[str]:
    """The backticked names listed in parentheses right after `before`."""
    found = re.search(re.escape(before) + r" \(([^)]*?)(?::|\))", " ".join(text.split()))
    assert found, f"no list after {before!r}"
    return re.findall(r"`([^`]+)`", found[1])


def test_config_readme_lists_every_update_rule_and_real_data_rule():
    """config/README.md once listed 3 of the 9 rules of the registry."""
    from attnbias.optim import rules

    text = (REPO / "config/README.md").read_text()
    listed = _listed(text, "has an update `rule`")
    full_batch = [n for n, r in rules.RULES.items() if r.log_step or r.update]
    assert sorted(listed) == sorted(full_batch), listed  # each once, in the README's order
    on_torch = [n for n, r in rules.RULES.items() if r.torch is not None]
    assert sorted(_listed(text, "A real-data optimizer also has a `rule`")) == sorted(on_torch)
