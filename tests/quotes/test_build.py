"""The docs' numbers held to the build (attnbias.quotes): a quoted number is current exactly
when the build's value, written at the quoted precision, gives it back. On a fixture build
(a claims table, an aggregate table and a provenance record in the pipeline's formats) the
check passes, fails on a planted wrong number naming page, line, quoted and built value,
and the writer repairs it; an optional target's number reads "not built here". The check on
the real default build is in tests/project/test_paper_claims.py (it shares that module's build).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnbias.quotes import __main__ as cli
from attnbias.quotes.build import Build
from attnbias.quotes.marks import find
from attnbias.quotes.quote import Page, Section, Source, check, markers
from attnbias.quotes.sources import created, final, first, outcome, robust_race, row, said
from attnbias.quotes.sweeps import sweep_count


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
