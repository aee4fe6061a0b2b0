"""config/config.yaml's comments state no number that nothing checks
(attnbias.quotes.config_comments): every number is marked for the quotes check, a
reference to the paper, part of a name, or an exception with a reason; controls: an
unmarked measured number is refused, the same number marked passes, an exception excuses
its own phrase only, and an exception whose comment changed is reported."""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from attnbias.quotes import config_comments as cc
from attnbias.quotes.build import Build
from attnbias.quotes.quote import Page, check

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / cc.CONFIG).read_text()


def test_every_number_in_a_comment_is_marked_or_excepted():
    assert [str(u) for u in cc.unchecked(TEXT)] == []


def test_every_exception_excuses_a_number_of_a_comment_and_says_why():
    assert cc.unused(TEXT) == []
    assert all(reason.strip() for reason in cc.EXCEPTIONS.values())


def test_an_unmarked_measured_number_is_refused():
    # control: a comment of the config that states a measured number, unmarked
    text = TEXT + "  # NGD first crosses 1e-3 at t = 819, by Fig. 2's data\n"
    found = cc.unchecked(text)
    assert [(u.line, u.number) for u in found] == [(TEXT.count("\n") + 1, "1e-3"),
                                                   (TEXT.count("\n") + 1, "819")]  # fmt: skip
    assert "neither marked" in str(found[0]) and "config/config.yaml:" in str(found[0])


def test_a_marked_number_reference_and_name_pass():
    text = "x: 1  # crosses at t = <!--q:some.name-->819<!--/q--> (Fig. 2, Thms. 2-4, fig2, l3)\n"
    assert cc.unchecked(text) == []
    # the number in a value (not a comment) is a setting, not scanned
    assert cc.unchecked("lr: 0.25\n") == []


def test_an_exception_excuses_its_phrase_only():
    exceptions = {"seeds 0..9": "a setting"}
    assert cc.unchecked("seeds: 10  # seeds 0..9\n", exceptions) == []
    refused = cc.unchecked("seeds: 10  # seeds 0..9, best 0.995\n", exceptions)
    assert [u.number for u in refused] == ["0.995"]
    # an exception no comment holds any longer, or one without a number, is reported
    assert cc.unused("a: 1  # seeds 1..9\n", exceptions) == ["seeds 0..9"]
    assert cc.unused("a: 1  # two seeds\n", {"two seeds": "words"}) == ["two seeds"]


def test_the_sign_steps_travel_is_the_arithmetic_the_comment_states():
    # the exception's reason: the comment's travel figures are arithmetic of the settings
    # (the sum over t = 0 .. steps - 1; 2 lr sqrt(steps), the integral, gave 3.3 and 10.4)
    optimizers = yaml.safe_load(TEXT)["experiments"]["geometry_example1"]["optimizers"]
    sign, nsd = optimizers["sign"]["lr"], optimizers["nsd-max"]["lr"]
    travel = lambda steps: sum(nsd / math.sqrt(t + 1) for t in range(steps))  # noqa: E731
    assert (round(sign * 3000, 1), round(travel(3000), 1)) == (3.0, 3.2)
    assert (round(sign * 30000), round(travel(30000), 1)) == (30, 10.3)


def test_the_quotes_check_reports_an_unmarked_number_as_a_fault(tmp_path):
    (tmp_path / "config").mkdir()
    page = Page(cc.CONFIG, unmarked=cc.faults)
    (tmp_path / cc.CONFIG).write_text("seeds: 10  # seeds 0..9\n")
    outcome, _ = check([page], Build(tmp_path / "results"), tmp_path)
    assert outcome.faults == []
    # control: the same comment with a measured number
    (tmp_path / cc.CONFIG).write_text("seeds: 10  # seeds 0..9; GD reaches 0.01 by t = 3,275\n")
    outcome, _ = check([page], Build(tmp_path / "results"), tmp_path)
    assert [(f.page, f.line, f.status) for f in outcome.faults] == [(cc.CONFIG, 1, "fault")] * 2
    assert "'3,275' in a comment is neither marked" in str(outcome.faults[1])
