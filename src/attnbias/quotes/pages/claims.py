"""docs/claims.md's registry: two sections generated whole from a build's claims table
(results/claims.csv), so that the lists and their numbers follow the build
(python -m attnbias.quotes write):

- the counted rows of the paper's statements that do not hold or are undecided;
- how many rows of each kind the default build has: the counted ones by test, the
  consistency checks by why they cannot fail, and which statements give the checks;
- the claims' robustness to our constants, once results/claims_robustness.md is built (an
  optional target; the default build measures fig2's caps only): the summary's count and
  every covered row whose verdict flips inside a constant's plausible range, with its
  robustness cell.
"""

from __future__ import annotations

import pandas as pd

from attnbias.claims import robustness
from attnbias.claims.summary import beyond_rows, kinds_line
from attnbias.quotes.build import ROBUSTNESS, Unbuilt
from attnbias.quotes.quote import Page, Section, Source, markers
from attnbias.quotes.sources import optional_experiments

CLAIMS_DOC = "docs/claims.md"
FAILURES = markers("counted rows that do not hold")
FRAGILE = markers("fragile covered rows")
KINDS = markers("rows of each kind")


def kinds(claims: pd.DataFrame, optional=()) -> str:
    """The generated text, its marker lines included: the summary's rows of each kind
    (claims.summary.kinds_line) on the default build's rows (less the experiments of optional
    targets, `optional`), and per statement whose rows are consistency checks, why and how
    many."""
    experiment = claims["key"].str.split(" ").str[0]
    paper = claims[~beyond_rows(claims) & ~experiment.isin(list(optional))]
    checks = paper[paper["category"] == "consistency"].fillna({"check": ""})
    lines = [KINDS[0], "", kinds_line(paper), ""]
    for (result, why), group in checks.groupby(["result", "check"], sort=False):
        why = why or "a near-tautology of the algorithm"
        lines.append(f"- **{result}**: {len(group)} row{'s' * (len(group) > 1)} ({why}).")
    return "\n".join([*lines, "", KINDS[1]])


def failures(claims: pd.DataFrame) -> str:
    """The generated text, its marker lines included: one line per covered row within the
    hypotheses whose outcome is not "holds", grouped by the paper's result."""
    paper = claims[~beyond_rows(claims)]
    counted = paper[(paper["category"] == "covered") & (paper["outcome"] != "holds")]
    lines = [FAILURES[0], ""]
    if counted.empty:
        lines.append("Every counted row holds.")
    for r in counted.itertuples():
        data = f" on {r.data}" if isinstance(r.data, str) and r.data else ""
        lines.append(
            f"- **{r.result}**, {r.experiment}{data}: {r.claim} Measured: {r.value_text}. "
            f"Verdict: {r.verdict}."
        )
    return "\n".join([*lines, "", FAILURES[1]])


def fragile(claims: pd.DataFrame) -> str:
    """The generated text, its marker lines included; Unbuilt where the claims table was
    computed without the robustness table."""
    paper = claims[~beyond_rows(claims)]
    if "robustness" not in paper or robustness.unmeasured(robustness.cells(paper)).any():
        raise Unbuilt(f"the claims' robustness column ({ROBUSTNESS})")
    rows = paper[(paper["category"] == "covered") & (paper["fragile"] == True)]  # noqa: E712
    lines = [FRAGILE[0], "", robustness.summary(paper), ""]
    for r in rows.itertuples():
        lines.append(f"- **{r.result}**, {r.experiment}: {r.claim} ({r.outcome}) {r.robustness}.")
    return "\n".join([*lines, "", FRAGILE[1]])


def whole_fragile(b) -> str:
    """fragile's text where this build holds the whole robustness table; Unbuilt where the
    claims read the default build's constants only (claims_robustness_default: fig2's caps)."""
    b.path("claims_robustness.parquet")
    return fragile(b.claims())


PAGE = Page(
    CLAIMS_DOC,
    sections=(
        Section(
            *KINDS,
            Source(
                "the rows of each kind (the summary's) and the consistency checks, from the "
                "claims table",
                lambda b: kinds(b.claims(), optional_experiments(b)),
            ),
        ),
        Section(
            *FAILURES,
            Source(
                "the counted rows that do not hold or are undecided, from the claims table",
                lambda b: failures(b.claims()),
            ),
        ),
        Section(
            *FRAGILE,
            Source(
                "the covered rows whose verdict flips inside a constant's plausible range",
                whole_fragile,
                ROBUSTNESS,
            ),
        ),
    ),
)
