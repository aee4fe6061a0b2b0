"""The section of docs/claims.md listing the counted rows of the paper's statements that do
not hold or are undecided, generated from a build's claims table (results/claims.csv), so
that the list and its numbers follow the build (python -m attnbias.quotes write)."""

from __future__ import annotations

import pandas as pd

from attnbias.claims.write import beyond_rows
from attnbias.quotes.quote import markers

START, END = markers("counted rows that do not hold")


def section(claims: pd.DataFrame) -> str:
    """The generated text, its marker lines included: one line per covered row within the
    hypotheses whose outcome is not "holds", grouped by the paper's result."""
    paper = claims[~beyond_rows(claims)]
    counted = paper[(paper["category"] == "covered") & (paper["outcome"] != "holds")]
    lines = [START, ""]
    if counted.empty:
        lines.append("Every counted row holds.")
    for r in counted.itertuples():
        data = f" on {r.data}" if isinstance(r.data, str) and r.data else ""
        lines.append(
            f"- **{r.result}**, {r.experiment}{data}: {r.claim} Measured: {r.value_text}. "
            f"Verdict: {r.verdict}."
        )
    return "\n".join([*lines, "", END])
