"""The section of docs/findings.md on the geometry experiments, generated from a build's
claims table (results/claims.csv) once results/geometry.pdf is built (an optional target):
every row beyond the paper, with its numbers and verdict, written between the section's
markers so that no number is typed by hand. The command that writes (and checks) it with
the docs' other numbers: attnbias.quotes.

    python -m attnbias.quotes write
"""

from __future__ import annotations

import pandas as pd

from attnbias.claims.beyond import KEYS
from attnbias.claims.write import beyond_summary_line
from attnbias.quotes.build import Unbuilt
from attnbias.quotes.quote import markers

START, END = markers("geometry findings")
TARGET = "results/geometry.pdf"


def section(claims: pd.DataFrame) -> str:
    """The generated text, its marker lines included: the summary line, then one line per
    measured row; Unbuilt where the claims were computed without the geometry tables."""
    rows = claims[claims["statement"].isin(KEYS)]
    if (rows["kind"] == "not measured").all():
        raise Unbuilt(f"the claims' rows beyond the paper ({TARGET}, then snakemake -c2)")
    lines = [START, "", beyond_summary_line(rows), ""]
    for r in rows[rows["kind"] != "not measured"].itertuples():
        lines.append(f"- {r.experiment}, {r.claim} Measured: {r.value_text}. Verdict: {r.verdict}.")
    return "\n".join([*lines, "", END])
