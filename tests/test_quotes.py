"""The docs' numbers held to the build (attnbias.quotes): a quoted number is current exactly
when the build's value, written at the quoted precision, gives it back. On a fixture build
(a claims table, an aggregate table and a provenance record in the pipeline's formats) the
check passes, fails on a planted wrong number naming page, line, quoted and built value,
and the writer repairs it; an optional target's number reads "not built here". The check on
the real default build is in tests/test_claims.py (it shares that module's build)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from project import REPO

from attnbias.quotes import __main__ as cli
from attnbias.quotes.build import Build
from attnbias.quotes.marks import find, mark
from attnbias.quotes.numbers import render
from attnbias.quotes.pages import PAGES
from attnbias.quotes.quote import Page, Section, Source, check, markers
from attnbias.quotes.sources import created, final, first, outcome, robust_race, row, said
from attnbias.quotes.sweeps import sweep_count


@pytest.mark.parametrize(
    ("phrase", "built", "written"),
    [
        ("467 to 1,188", [375, 1241, 900], "375 to 1,241"),  # the stale crossing
        ("1e-5 to 3e-5", [9.99e-6, 2.63e-5], "1e-5 to 3e-5"),  # rounds to the quoted digits
        ("1.0e-5 to 2.6e-5", [9.99e-6, 2.64e-5], "1.0e-5 to 2.6e-5"),
        ("−0.18 to −0.41", [-0.407, -0.176], "−0.18 to −0.41"),  # the phrase's order
        ("0.51", [0.5054, 0.5096], "0.51"),  # one number where every seed writes it
        ("0.506", [0.5054, 0.5096], "0.505 to 0.510"),  # else the range
        ("100 to 131", [100, 117, 131], "100 to 131"),  # an integer is exact
        ("10¹¹⁹ to 10¹³⁵", [10**119.3, 10**134.4], "10¹¹⁹ to 10¹³⁴"),
        ("10^11.5", [10**11.46], "10^11.5"),
        ("40% to 75%", [0.4, 0.75], "40% to 75%"),
        ("−10⁴", [-10000.8], "−10⁴"),
        ("11 to\n  37", [11.516, 37.29], "12 to\n  37"),  # a range broken across lines
        ("2e-3", [np.nan], None),  # the build has no value
    ],
)
def test_a_number_is_written_at_its_quoted_precision(phrase, built, written):
    assert render(phrase, built) == written


def test_a_round_number_is_rounded_only_where_the_words_say_so():
    assert render("1,300", [1292]) == "1,292"
    assert render("1,300", [1292], approximate=True) == "1,300"
    assert render("1,100", [1072, 1177], approximate=True) == "1,100 to 1,200"


# ---------------------------------------------------------------------------------------
# a fixture build in the pipeline's formats
def write_build(results: Path, gd_first: list[float]) -> None:
    """fig2: GD and NGD over 3 seeds; its claims rows; the claims job's provenance."""
    results.mkdir(parents=True)
    rows = []
    for seed in range(3):
        for t in (1, 10, 100):
            for optimizer, gap in (("gd", 1e-1 / t**0.1), ("ngd", 1e-2 / t)):
                rows.append(("fig2", optimizer, seed, t, "gap_W", gap * (1 + 0.1 * seed)))
        rows.append(("fig2", "gd", seed, 100, "first_gap_W_below_0.01", gd_first[seed]))
    (results / "fig2").mkdir()
    pd.DataFrame(
        rows, columns=["experiment", "optimizer", "seed", "iteration", "metric", "value"]
    ).to_parquet(results / "fig2/metrics.parquet")
    claims = pd.DataFrame(
        [
            {"key": "fig2 ngd rate bound", "low": -1.93, "high": -1.67, "mean": -1.8, "r2": 0.998,
             "outcome": "holds", "detail": "it flips if moved by a factor 2.79 (to 0.1)"},
            {"key": "fig2 ps ahead of ngd", "low": 54.4, "high": 84.5, "mean": 70.0, "r2": np.nan,
             "outcome": "does not hold", "detail": "NGD ahead at t = 100 on 3 of 3 seeds"},
        ]
    )  # fmt: skip
    claims.to_csv(results / "claims.csv", index=False)
    record = {"created": "2026-11-26T19:23:58+00:00", "config": {"experiments": {}}}
    (results / "claims.provenance.json").write_text(json.dumps(record))


PAGE = """# Findings

Measured on <!--q:day-->2026-11-26<!--/q-->. NGD's slope is <!--q:slope-->−1.67 to −1.93<!--/q-->
(a factor <!--q:flip-->2.79<!--/q--> from flipping); NGD ends at <!--q:ngd-->1.0e-4 to
1.2e-4<!--/q--> and GD first crosses 1e-2 at t = <!--q:gd-first-->40 to 60<!--/q-->.
PS <!--q:ps-->does not lead NGD<!--/q-->. The sweep holds in <!--q:sweep-->27<!--/q--> settings.

{start}
generated from 2 claims rows
{end}
"""
START, END = markers("fixture section")


def registry(path: str = "docs/findings.md") -> Page:
    return Page(
        path,
        {
            "day": created(),
            "slope": row("fig2 ngd rate bound"),
            "flip": said("fig2 ngd rate bound", "it flips if moved by a factor"),
            "ngd": final("fig2", "ngd"),
            "gd-first": first("fig2", "gd", 1e-2),
            "sweep": sweep_count("fig3", "ps_fastest_W", False),
        },
        {"ps": outcome("fig2 ps ahead of ngd", "does not hold")},
        (Section(START, END, Source(
            "the fixture section",
            lambda b: f"{START}\ngenerated from {len(b.claims())} claims rows\n{END}")),),
    )  # fmt: skip


def entries(path: str = "docs/findings.md") -> list[Page]:
    return [registry(path)]


@pytest.fixture
def fixture(tmp_path):
    write_build(tmp_path / "results", gd_first=[40, 52, 60])
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/findings.md").write_text(PAGE.format(start=START, end=END))
    return tmp_path


def test_the_check_passes_on_a_current_page(fixture):
    outcome_, written = check(entries("docs/findings.md"), Build(fixture / "results"), fixture)
    assert outcome_.faults == [], [str(f) for f in outcome_.faults]
    assert outcome_.compared == 6  # 5 numbers, the fact; the section and the sweep aside
    assert outcome_.compared + len(outcome_.unbuilt) == 7 and not outcome_.findings[1:]
    # the sweep is an optional target: named, not passed silently
    (unbuilt,) = outcome_.unbuilt
    assert unbuilt.target == "results/sweeps/fig3.pdf" and unbuilt.line == 6
    assert "not built here: results/sweeps/fig3.pdf" in str(unbuilt)
    assert written["docs/findings.md"] == (fixture / "docs/findings.md").read_text()


def test_a_planted_wrong_number_fails_and_the_writer_repairs_it(fixture):
    page = fixture / "docs/findings.md"
    page.write_text(page.read_text().replace(">40 to 60<", ">467 to 1,188<"))
    found, written = check(entries("docs/findings.md"), Build(fixture / "results"), fixture)
    (stale,) = found.faults
    assert (stale.page, stale.line, stale.name, stale.quoted, stale.built) == (
        "docs/findings.md",
        5,
        "gd-first",
        "467 to 1,188",
        "40 to 60",
    )
    assert str(stale).startswith(
        'docs/findings.md:5: gd-first: stale: quoted "467 to 1,188", the build gives "40 to 60"'
    )
    assert written["docs/findings.md"] == PAGE.format(start=START, end=END)


def test_the_day_of_the_numbers_moves_only_with_the_numbers(fixture, tmp_path):
    """A rebuild on a later day that gives the same numbers leaves the page current (the
    numbers were measured on the day it names); where a number changes, the writer writes
    the new number and the new day."""
    later = tmp_path / "later"
    write_build(later, gd_first=[40, 52, 60])
    record = json.loads((later / "claims.provenance.json").read_text())
    record["created"] = "2026-12-01T08:00:00+00:00"
    (later / "claims.provenance.json").write_text(json.dumps(record))
    page = (fixture / "docs/findings.md").read_text()
    same, written = check(entries("docs/findings.md"), Build(later), fixture)
    assert same.faults == [] and written["docs/findings.md"] == page
    (fixture / "docs/findings.md").write_text(page.replace(">40 to 60<", ">41 to 60<"))
    changed, written = check(entries("docs/findings.md"), Build(later), fixture)
    assert [(f.quoted, f.built) for f in changed.faults] == [("41 to 60", "40 to 60")]
    assert written["docs/findings.md"] == page.replace("2026-11-26", "2026-12-01")


def test_a_changed_build_makes_the_page_stale(fixture, tmp_path):
    """The same page against a build whose GD crosses later: stale, as the issue's."""
    write_build(tmp_path / "later", gd_first=[375, 900, 1241])
    found, _ = check(entries("docs/findings.md"), Build(tmp_path / "later"), fixture)
    assert [(f.quoted, f.built) for f in found.faults] == [("40 to 60", "375 to 1,241")]


def test_edited_words_around_a_marked_number_leave_it_current(fixture):
    """The check reads the markers, not the sentence: a reworded, rewrapped sentence with
    its marked numbers as they were passes."""
    page = fixture / "docs/findings.md"
    edited = (
        page.read_text()
        .replace("GD first crosses 1e-2 at t =", "gradient descent\nfirst passes 1e-2 between t =")
        .replace("\nPS <!--q:ps-->does", " PS <!--q:ps-->does")
        .replace("NGD's slope is", "The slope of NGD reads")
    )
    page.write_text(edited)
    found, written = check(entries(), Build(fixture / "results"), fixture)
    assert found.faults == [] and found.compared == 6
    assert written["docs/findings.md"] == edited


def test_a_stale_section_and_a_false_fact_fail(fixture):
    page = fixture / "docs/findings.md"
    text = page.read_text()
    page.write_text(text.replace("from 2 claims rows", "from 3 claims rows"))
    found, _ = check(entries(), Build(fixture / "results"), fixture)
    assert [(f.what, f.quoted) for f in found.faults] == [
        ("the fixture section", "generated from 3 claims rows")
    ]
    # a fact the build contradicts
    claims = pd.read_csv(fixture / "results/claims.csv")
    claims.loc[1, "outcome"] = "holds"
    claims.to_csv(fixture / "results/claims.csv", index=False)
    page.write_text(text)
    found, _ = check(entries(), Build(fixture / "results"), fixture)
    assert [(f.name, f.quoted, f.line) for f in found.faults] == [("ps", "does not lead NGD", 6)]


def test_an_unknown_a_missing_and_a_broken_marker_are_named(fixture):
    """A marker whose name the page's registry lacks is an error naming it (and the number
    it was meant for is then missing, by name); so is a marker on a page with no registry,
    one that is not closed, and one at the start of a line (Markdown: an HTML block)."""
    page = fixture / "docs/findings.md"
    text = page.read_text()
    page.write_text(text.replace("<!--q:flip-->", "<!--q:flip-factor-->"))
    found, written = check(entries(), Build(fixture / "results"), fixture)
    assert [(f.status, f.name, f.line) for f in found.faults] == [
        ("unknown", "flip-factor", 4),
        ("missing", "flip", 0),
    ]
    assert str(found.faults[0]).startswith(
        "docs/findings.md:4: flip-factor: unknown: no entry 'flip-factor' in the registry of "
        "docs/findings.md"
    )
    assert written["docs/findings.md"] == page.read_text()  # nothing it could write
    (fixture / "README.md").write_text("See <!--q:ngd-->1.0e-4<!--/q-->.\n")
    page.write_text(text.replace("from flipping); NGD ends at ", "from flipping); NGD ends at\n"))
    found, _ = check(entries(), Build(fixture / "results"), fixture)
    assert [(f.page, f.line, f.status) for f in found.faults] == [
        ("docs/findings.md", 5, "fault"),
        ("README.md", 1, "unknown"),
    ]
    assert "'ngd' begins a line" in found.faults[0].built
    marks, errors = find("a <!--q:x-->1 and <!--q:y-->2<!--/q--> b <!--/q--> `<!--q:z-->`")
    assert [m.name for m in marks] == ["y"]
    assert [e for _, e in errors] == [
        "marker 'x' is not closed before 'y'",
        "a marker's close without its opening",
    ]


def test_write_restores_a_changed_number_by_its_name(fixture):
    page = fixture / "docs/findings.md"
    page.write_text(page.read_text().replace(">2.79<", ">3.12<").replace("1.2e-4<", "1.9e-4<"))
    found, written = check(entries(), Build(fixture / "results"), fixture)
    assert [(f.name, f.line, f.quoted, f.built) for f in found.faults] == [
        ("flip", 4, "3.12", "2.79"),
        ("ngd", 4, "1.0e-4 to\n1.9e-4", "1.0e-4 to\n1.2e-4"),
    ]
    assert written["docs/findings.md"] == PAGE.format(start=START, end=END)


def test_a_default_builds_file_that_is_missing_is_a_fault(fixture):
    (fixture / "results/fig2/metrics.parquet").unlink()
    found, _ = check(entries("docs/findings.md"), Build(fixture / "results"), fixture)
    assert {f.status for f in found.faults} == {"fault"}
    assert "the default build lacks" in str(found.faults[0])


def test_the_command_exits_non_zero_on_a_stale_number(fixture, monkeypatch, capsys):
    monkeypatch.setattr(cli, "PAGES", entries("docs/findings.md"))
    args = ["--results", str(fixture / "results"), "--root", str(fixture)]
    assert cli.main(["check", *args]) == 0
    page = fixture / "docs/findings.md"
    page.write_text(page.read_text().replace("1.2e-4<", "1.3e-4<"))
    assert cli.main(["check", *args]) == 1
    out = capsys.readouterr().out
    assert 'docs/findings.md:4: ngd: stale: quoted "1.0e-4 to\n1.3e-4", the build ' in out
    assert cli.main(["write", *args]) == 0
    assert page.read_text() == PAGE.format(start=START, end=END)
    assert cli.main(["check", "--results", str(fixture / "nothing"), "--root", str(fixture)]) == 2


# ---------------------------------------------------------------------------------------
# the registries of the documented pages
def test_every_marker_is_registered_and_every_entry_marked():
    """Without a build: every page's markers are well formed and name an entry of its
    registry, every entry stands on its page, and every section's marker lines once."""
    for page in PAGES:
        text = (REPO / page.path).read_text()
        marks, errors = find(text)
        assert not errors, (page.path, errors)
        names = {m.name for m in marks}
        assert names <= page.names(), (page.path, sorted(names - page.names()))
        assert page.names() <= names, (page.path, sorted(page.names() - names))
        for section in page.sections:
            assert text.count(section.start) == 1 and text.count(section.end) == 1, section.start
    # the other pages hold no marker
    registered = {page.path for page in PAGES}
    for path in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        if str(path.relative_to(REPO)) not in registered:
            assert find(path.read_text()) == ([], []), path


def test_every_optional_number_names_its_target():
    """A sweep's or a real-data figure's numbers name the target that builds them."""
    for page in PAGES:
        for source in [*page.numbers.values(), *page.facts.values()]:
            if any(w in source.what for w in ("sweep", "fig6_mnist5k", "claims_robustness")):
                assert source.target, source.what


def test_a_robustness_number_is_read_from_its_row_or_is_not_built(fixture):
    """docs/regime.md quotes Eq. 10 at eta = 0.1 from the robustness target's rows: the
    algorithm's range over seeds from the row's words; without the target, "not built"."""
    (fixture / "docs/findings.md").unlink()  # this page alone
    page = fixture / "docs/regime.md"
    page.write_text("At eta 0.1: W <!--q:eq10-->0.047 to 0.11<!--/q--> against GD's "
                    "<!--q:gd-->0.020 to 0.037<!--/q-->.\n")  # fmt: skip
    race = "fig3 ahead of gd eq10 gap_W"
    entry = Page("docs/regime.md", {"eq10": robust_race("eq10_eta", 0.1, race, "Eq. 10"),
                                    "gd": robust_race("eq10_eta", 0.1, race, "GD")})  # fmt: skip
    found, _ = check([entry], Build(fixture / "results"), fixture)
    assert [f.target for f in found.unbuilt] == ["results/claims_robustness.md"] * 2
    points = fixture / "results/claims_robustness"
    points.mkdir()
    words = "at t = 10000, mean (min to max) over seeds: Eq. 10 0.0753 (0.0469 to 0.106), GD "
    pd.DataFrame(
        {"value": [0.1, 1.0], "key": "fig3 ahead of gd eq10 gap_W",
         "value_text": [words + "0.0283 (0.02 to 0.0374)", words + "0.0283 (0.02 to 0.0399)"]}
    ).to_parquet(points / "eq10_eta.parquet")  # fmt: skip
    found, _ = check([entry], Build(fixture / "results"), fixture)
    assert found.findings == [] and found.compared == 2
    page.write_text(page.read_text().replace("0.037<", "0.040<"))
    found, _ = check([entry], Build(fixture / "results"), fixture)
    assert [(f.quoted, f.built) for f in found.faults] == [("0.020 to 0.040", "0.020 to 0.037")]


def write_eta_sweep(results: Path) -> None:
    """The eta sweep's tables and provenance, in sweep_tables' formats: 2 steps, 2 seeds."""
    sweeps = results / "sweeps"
    sweeps.mkdir(parents=True)
    claims = ("lem11_ratio_bounded", "thm2_exponent", "thm3_rate", "thm4_u_direction")
    points = pd.DataFrame(
        {"point": ["lr~0.1", "lr~1"], "optimizers.eq10.lr": [0.1, 1.0], "seeds": [2, 2]}
        | {c: [False, True] for c in (*claims, "eq10_below_gd_W")}
        | {f"{c}_seeds": [1, 2] for c in (*claims, "eq10_below_gd_W")}
    )
    points.to_csv(sweeps / "eta_cond1_points.csv", index=False)
    runs = pd.DataFrame(
        {"point": ["lr~0.1"] * 2 + ["lr~1"] * 2, "optimizer": "eq10", "seed": [0, 1] * 2,
         "loss_ratio_growth": [0.89, 1.57, -0.17, 0.03],
         "loss_exponent": [-0.56, -0.57, -0.51, -0.51],
         "rate_W_lnln": [-1.8, -0.99, -0.41, -0.18], "final_log10_gap_u": [-1.8, -1.6, -4.6, -4.3]}
    )  # fmt: skip
    runs.to_csv(sweeps / "eta_cond1.csv", index=False)
    thresholds = {"lem11_ratio_bounded": 1.0, "thm2_exponent": -0.4, "thm3_rate": -1.0,
                  "thm4_u_direction": -3.0}  # fmt: skip
    config = {
        "experiments": {"fig3_cond1": {"optimizers": {"eq10": {"lr": 1.0}}}},
        "sweeps": {"eta_cond1": {"base": "fig3_cond1",
                                 "claims": {c: {"threshold": v} for c, v in thresholds.items()}}},
    }  # fmt: skip
    record = {"created": "2026-11-26T21:00:00+00:00", "config": config}
    (sweeps / "eta_cond1.provenance.json").write_text(json.dumps(record))


def test_the_sweeps_numbers_and_the_eta_table(tmp_path):
    from attnbias.quotes.sweeps import ETA, eta_table, held_at, sweep_value

    write_eta_sweep(tmp_path / "results")
    build = Build(tmp_path / "results")
    assert eta_table(build).splitlines() == [
        "| η | Lem. 11 (iii) growth (≤ 1) | Thm. 2 k (≥ 0.4) | Thm. 3 slope (≤ −1) | "
        "Thm. 4 log10(1 − cos u) (≤ −3) | below GD in W throughout |",
        "|---|---|---|---|---|---|",
        "| 0.1 | 0.89 to 1.6: holds 1/2 | 0.56 to 0.57: 1/2 | −1.8 to −0.99: 1/2 | "
        "−1.8 to −1.6: 1/2 | 1/2 |",
        "| 1 (default) | −0.17 to 0.03: holds 2/2 | 0.51: 2/2 | −0.41 to −0.18: 2/2 | "
        "−4.6 to −4.3: 2/2 | 2/2 |",
    ]
    failing = sweep_value("eta_cond1", {ETA: 0.1}, "failing_seeds", "lem11_ratio_bounded")
    assert failing.read(build).tolist() == [1.0]
    assert held_at("eta_cond1", ETA, "thm3_rate", holds=False)(0.1).read(build)
    assert not held_at("eta_cond1", ETA, "thm3_rate", holds=False)(0.1, 1.0).read(build)
    assert held_at("eta_cond1", ETA, "thm3_rate", some_seed=True)(0.1, 1.0).read(build)
    assert sweep_count("eta_cond1", "thm3_rate", True).read(build) == 1


def test_the_geometry_robustness_counts_are_read_or_not_built(tmp_path):
    """docs/geometry.md's "How robust" counts: "not built here" until the claims table was
    measured with the geometry constants' points, then the rows beyond the paper, those
    with a robustness cell and those fragile."""
    from attnbias.claims.beyond import KEYS
    from attnbias.quotes.pages.geometry import NUMBERS

    results = tmp_path / "results"
    results.mkdir()
    key = sorted(KEYS)[0]
    pd.DataFrame(
        {"key": ["a", "b", "c"], "statement": key, "category": "covered",
         "robustness": ["not measured: not built", "", ""], "fragile": False}
    ).to_csv(results / "claims.csv", index=False)  # fmt: skip
    record = {"created": "2026-11-26T19:23:58+00:00", "config": {"constants": {"geometry_a": {}}}}
    (results / "claims.provenance.json").write_text(json.dumps(record))
    page = tmp_path / "docs/geometry.md"
    page.parent.mkdir()
    page.write_text(
        "Here <!--q:robust.beyond-depend-->1<!--/q--> of <!--q:robust.beyond-rows-->3<!--/q--> "
        "depend; <!--q:robust.beyond-fragile-->1<!--/q--> fragile.\n"
    )
    counts = ("robust.beyond-depend", "robust.beyond-rows", "robust.beyond-fragile")
    registry = [Page("docs/geometry.md", {n: NUMBERS[n] for n in counts})]
    found, _ = check(registry, Build(results), tmp_path)
    assert {f.target for f in found.unbuilt} == {"results/claims_robustness.md"}
    assert len(found.unbuilt) == 3 and not found.faults
    pd.DataFrame(
        {"key": ["a", "b", "c"], "statement": key, "category": "covered",
         "robustness": ["x = 1 (ours): holds", "", ""], "fragile": [True, False, False]}
    ).to_csv(results / "claims.csv", index=False)  # fmt: skip
    found, _ = check(registry, Build(results), tmp_path)
    assert [f.target for f in found.unbuilt] == ["results/claims_robustness.md"] * 3  # no points
    (results / "claims_robustness").mkdir()
    (results / "claims_robustness/geometry_a.parquet").write_bytes(b"")
    found, _ = check(registry, Build(results), tmp_path)
    assert found.findings == [] and found.compared == 3


# docs/geometry.md's "What it found": a synthetic robustness build (claims rows beyond the
# paper, one constant's points, the constants' benchmark files) in the pipeline's formats
R = "robust.ex1.adam."
FOUND = " ".join([
    "Adam on Example 1 is the", mark(R + "fragile", "fragile"), "one. It now",
    mark(R + "first.beta2", "holds at beta2 0.999 only"), "(closer on",
    mark(R + "first.beta2.alone", "5"), "of", mark(R + "first.beta2.seeds", "5"), "seeds,",
    "leads", mark(R + "first.beta2.lead", "-0.014 to -0.010") + "). Its margin, undecided",
    "at ours (" + mark(R + "margin.ours", "0.68 to 0.70") + ",",
    mark(R + "margin.ours.rising", "rising") + "),",
    mark(R + "margin.beta2.fails", "does not hold at beta2 0.9 or 0.99"),
    "(" + mark(R + "margin.beta2", "0.41 to 0.49"), "at t =",
    mark(R + "margin.beta2.t-last", "30000") + ",", mark(R + "margin.beta2.falling", "falling"),
    "from", mark(R + "margin.beta2.early", "0.71 to 0.85"), "at t =",
    mark(R + "margin.beta2.t-before", "2491") + "). The jobs took",
    mark("robust.cost.cpu-seconds", "896"), "CPU seconds,",
    mark("robust.cost.largest", "sign descent's and Adam's steps and Adam's eps the largest") + ".",
]) + "\n"  # fmt: skip


def write_robustness_build(results: Path) -> None:
    """Adam's two rows on Example 1: in the claims table (ours, with their robustness cells)
    and at each beta2 tried; four constants' benchmark files."""
    from attnbias.claims.beyond import KEYS

    first, margin = "geometry_example1 adam own norm first", "geometry_example1 adam own margin"
    results.mkdir(parents=True)
    words = "{} of the optimal max margin at t = 30000 ({} at t = 2491)"
    cell = "Adam's beta2 (geometry) = 0.999 (ours): ...; FRAGILE: flips inside [0.9, 0.999]"
    pd.DataFrame(
        {"key": [first, margin], "statement": sorted(KEYS)[0], "category": "covered",
         "outcome": ["holds", "undecided"], "low": [0.004, 0.6819], "high": [0.0086, 0.7022],
         "value_text": ["lead 0.00401 to 0.00857",
                        words.format("0.682 to 0.702", "0.593 to 0.662")],
         "robustness": cell, "fragile": True}
    ).to_csv(results / "claims.csv", index=False)  # fmt: skip
    beta2 = {"label": "Adam's beta2 (geometry)", "ours": 0.999, "values": [0.9, 0.99, 0.999],
             "plausible": [0.9, 0.999]}  # fmt: skip
    constants = {"geometry_adam_beta2": beta2}
    record = {"created": "2026-11-28T07:00:00+00:00", "config": {"constants": constants}}
    (results / "claims.provenance.json").write_text(json.dumps(record))
    (results / "claims_robustness").mkdir()
    pd.DataFrame(
        {"value": [0.9, 0.99, 0.999] * 2, "key": [first] * 3 + [margin] * 3,
         "outcome": ["does not hold", "does not hold", "holds",
                     "does not hold", "does not hold", "undecided"],
         "low": [-0.0137, -0.0138, 0.004, 0.4143, 0.4392, 0.6819],
         "high": [-0.0101, -0.0106, 0.0086, 0.4632, 0.4866, 0.7022],
         "value_text": ["", "", "", words.format("0.414 to 0.463", "0.712 to 0.746"),
                        words.format("0.439 to 0.487", "0.803 to 0.849"),
                        words.format("0.682 to 0.702", "0.593 to 0.662")],
         "seeds_alike": [5, 5, -1, 5, 5, -1], "seeds": 5}
    ).to_parquet(results / "claims_robustness/geometry_adam_beta2.parquet")  # fmt: skip
    benchmarks = results / "benchmarks/claims_robustness"
    benchmarks.mkdir(parents=True)
    for name, cpu in (("adam_beta2", 175.78), ("adam_eps", 252.19), ("adam_lr", 204.96),
                      ("sign_lr", 263.47), ("gd_lr", 562.76)):  # fmt: skip
        job = f"{'geometry_' if name != 'gd_lr' else ''}{name}"  # gd_lr: a paper's constant
        pd.DataFrame({"s": [cpu * 1.3], "h:m:s": "0:04:23", "cpu_time": [cpu]}).to_csv(
            benchmarks / f"{job}.tsv", sep="\t", index=False
        )


def geometry_found(tmp_path: Path) -> tuple[list[Page], Path]:
    """The geometry registry's entries that FOUND marks, on a copy of it."""
    from attnbias.quotes.pages.geometry import FACTS, NUMBERS

    write_robustness_build(tmp_path / "results")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/geometry.md").write_text(FOUND)
    names = {m.name for m in find(FOUND)[0]}
    page = Page("docs/geometry.md", {n: s for n, s in NUMBERS.items() if n in names},
                {n: s for n, s in FACTS.items() if n in names})  # fmt: skip
    assert page.names() == names
    return [page], tmp_path


def test_the_geometry_pages_robustness_names_are_registered():
    """Every number and verdict of "What it found" and the cost has its name in the geometry
    registry, read from the robustness target (not built: "not built here")."""
    from attnbias.quotes.build import ROBUSTNESS
    from attnbias.quotes.pages.geometry import PAGE

    text = (REPO / "docs/geometry.md").read_text()
    found = text[text.index("Cost\n(") : text.index("## The figure")]
    names = {m.name for m in find(found)[0]}
    assert len(names) == 66 and names <= PAGE.names()
    assert {
        "robust.ex1.adam.first.beta2.lead",
        "robust.dm.adam.first.eps-1e-4.closer-by",
        "robust.ex1.kq.margin.lr-3",
        "robust.cost.cpu-seconds",
    } <= set(PAGE.numbers)
    assert {
        "robust.ex1.adam.first.eps",
        "robust.dm.mirror.margin.lr-30",
        "robust.steps-kept",
        "robust.cost.largest",
    } <= set(PAGE.facts)
    for name in names:
        assert (PAGE.numbers.get(name) or PAGE.facts[name]).target == ROBUSTNESS, name


def test_the_geometry_robustness_numbers_are_read_and_a_changed_one_is_stale(tmp_path):
    pages, root = geometry_found(tmp_path)
    found, written = check(pages, Build(root / "results"), root)
    assert found.findings == [], [str(f) for f in found.findings]
    assert found.compared == 15
    page = root / "docs/geometry.md"
    page.write_text(FOUND.replace(">0.71 to 0.85<", ">0.71 to 0.80<").replace(">2491<", ">2500<"))
    found, written = check(pages, Build(root / "results"), root)
    assert [(f.name, f.quoted, f.built) for f in found.faults] == [
        ("robust.ex1.adam.margin.beta2.early", "0.71 to 0.80", "0.71 to 0.85"),
        ("robust.ex1.adam.margin.beta2.t-before", "2500", "2491"),
    ]
    assert written["docs/geometry.md"] == FOUND
    # a verdict the build no longer gives: Adam's step now the cheaper
    bench = root / "results/benchmarks/claims_robustness/geometry_adam_lr.tsv"
    bench.write_text(bench.read_text().replace("204.96", "104.96"))
    page.write_text(FOUND)
    found, _ = check(pages, Build(root / "results"), root)
    assert [(f.name, f.built) for f in found.faults] == [
        ("robust.cost.cpu-seconds", "796"),
        ("robust.cost.largest", "does not hold"),
    ]


def test_the_geometry_robustness_numbers_are_not_built_without_the_points(tmp_path):
    pages, root = geometry_found(tmp_path)
    (root / "results/claims_robustness/geometry_adam_beta2.parquet").unlink()
    found, _ = check(pages, Build(root / "results"), root)
    assert not found.faults
    assert {f.target for f in found.unbuilt} == {"results/claims_robustness.md"}
    # every number and verdict but the cost's (the benchmark files): ours too, as the claims
    # table without its points is not the robustness target's
    assert len(found.unbuilt) == 13 and found.compared == 2


def test_a_robustness_point_is_matched_at_its_own_value():
    """eps 1e-12 is not eps 1e-8 (an absolute tolerance would make them one), and a margin
    row's words read back as attnbias.claims.beyond writes them."""
    from attnbias.quotes.robustness_points import held, margin_text, measured

    class Points:
        def robustness_points(self, constant):
            return pd.DataFrame(
                {"value": [1e-12, 1e-8, 1e-6], "key": "r", "low": [0.1, 0.2, 0.3],
                 "high": [0.15, 0.25, 0.35], "outcome": ["does not hold", "holds", "holds"]}
            )  # fmt: skip

    assert measured("eps", "r", 1e-12).read(Points()).tolist() == [0.1, 0.15]
    assert held("eps", "r", "holds", 1e-8, 1e-6, only=True).read(Points())
    assert not held("eps", "r", "holds", 1e-12).read(Points())
    assert margin_text("0.6 of the optimal l3 margin at t = 300 (0.5 to 0.55 at t = 30)") == {
        "late": [0.6], "t_last": 300, "early": [0.5, 0.55], "t_before": 30
    }  # fmt: skip
    with pytest.raises(ValueError, match="no longer reads"):
        margin_text("0.6 of the optimum")
