"""results/claims_neighbours.md: the neighbours' statements measured (claims.neighbours),
one section per paper under its own summary line, each with its rows grouped by result
(the claims table's compact columns) and its registry."""

from __future__ import annotations

import pandas as pd

from attnbias.claims.claim import by_result
from attnbias.claims.neighbours import DEFECTS, NEIGHBOURS, PAPERS
from attnbias.claims.summary import as_claims
from attnbias.claims.write import markdown_groups, registry_lines

TITLE = "The neighbours' statements, measured"
HOW_TO_READ = (
    "Not this paper's statements, and outside its counts: the sentences of two neighbouring "
    "papers' theorems and figures (docs/neighbours.md), measured on every seed of their "
    "experiments as this project rebuilds them. A theorem's sentence is judged on the "
    "algorithm and regime it is proved for: their local-convergence theorems ask a start "
    "near the locally optimal direction, and these runs start as their figures' do (a random "
    "draw), so those rows read 'comparison' and are not counted. A figure's sentence is "
    "judged on that figure's algorithm and settings, and counted. Locally optimal tokens, "
    "their theorems' hypothesis, are checked per run on the support of the run's own norm's "
    "SVM; runs without them are left out and named. A defect row measures what their code "
    "would report (their solver, their normalisation) against the exact computation: it "
    "holds where the two agree, and is counted apart. Every seed must pass."
)


def summary_line(table: pd.DataFrame) -> str:
    """One paper's counts: its statements' counted rows by outcome, comparisons, checks, the
    defect rows by outcome, and the entries not measured."""
    claims = as_claims(table)
    defect = [c for c in claims if c.statement in DEFECTS and c.kind != "not measured"]
    rest = [c for c in claims if c.statement not in DEFECTS]
    covered = [c for c in rest if c.category == "covered"]

    def outcomes(rows):
        return ", ".join(
            f"{sum(c.outcome == o for c in rows)} {o}"
            for o in ("holds", "does not hold", "undecided")
        )

    unmeasured = sum(c.kind == "not measured" for c in claims)
    return (
        f"{len(covered)} counted rows ({outcomes(covered)}); "
        f"{sum(c.category == 'comparison' for c in rest)} comparisons (not counted); "
        f"{sum(c.category == 'consistency' for c in rest)} consistency checks; defects of their "
        f"code, measured: {len(defect)} rows ({outcomes(defect)}); {unmeasured} not measured."
    )


def to_markdown(table: pd.DataFrame) -> str:
    """The sections, one per paper."""
    table = by_result(table)
    lines = [f"# {TITLE}", "", HOW_TO_READ, ""]
    for paper in PAPERS:
        entries = [s for s in NEIGHBOURS if s.section == paper]
        mine = table[table["statement"].isin({s.key for s in entries})]
        lines += [f"# {paper}", "", f"**{summary_line(mine)}**", ""]
        lines += markdown_groups(mine)
        lines += registry_lines(mine, entries, f"The registry: {paper.split(' (')[0]}")
    return "\n".join(lines)
