"""The section of docs/claims.md on the claims' robustness to our constants, generated from
a build's claims table once results/claims_robustness.md is built (an optional target):
the summary's count and every covered row whose verdict flips inside a constant's plausible
range, with its robustness cell (python -m attnbias.quotes write)."""

from __future__ import annotations

import pandas as pd

from attnbias.claims import robustness
from attnbias.claims.write import beyond_rows
from attnbias.quotes.build import Unbuilt
from attnbias.quotes.quote import markers

START, END = markers("fragile covered rows")
TARGET = "results/claims_robustness.md"


def section(claims: pd.DataFrame) -> str:
    """The generated text, its marker lines included; Unbuilt where the claims table was
    computed without the robustness table."""
    paper = claims[~beyond_rows(claims)]
    if "robustness" not in paper or robustness.unmeasured(robustness.cells(paper)).any():
        raise Unbuilt(f"the claims' robustness column ({TARGET})")
    fragile = paper[(paper["category"] == "covered") & (paper["fragile"] == True)]  # noqa: E712
    lines = [START, "", robustness.summary(paper), ""]
    for r in fragile.itertuples():
        lines.append(f"- **{r.result}**, {r.experiment}: {r.claim} ({r.outcome}) {r.robustness}.")
    return "\n".join([*lines, "", END])
