"""docs/geometry.md's registry (attnbias.quotes.pages.geometry): the "How robust" counts and
every number and verdict of "What it found" and the cost, read from a synthetic robustness
build in the pipeline's formats, stale by name when changed, "not built here" without it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from project import REPO

from attnbias.quotes.build import Build
from attnbias.quotes.marks import find, mark
from attnbias.quotes.quote import Page, check


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
