"""What a claim is: a statement of the paper (Statement, an entry of statements.STATEMENTS)
and a row of the claims table (Claim: a statement measured on one run, with its verdict in
the words of its kind of test), and rows as a table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

# The kinds of test, each with its own verdict words (Claim.verdict):
#   bound        a bound whose constant was lost: consistent while the quantity decays at
#                least at the bound's rate; slower reads "undecided: slower than the bound's
#                rate" (never "does not hold", which needs the constant)
#   remark       a remark about a figure, tested on that figure's algorithm and settings,
#                with the ratio and the tolerance shown
#   race         one method ahead of another: both numbers, the margin at the last t
#   threshold    a threshold of the paper's or ours; ours states the factor that flips it
#   measurement  a derived rate or a property read off the curves with a stated tolerance
#   consistency  a near-tautology of the algorithm (outside the count)
#   not measured a statement without a run here (outside the count)
KINDS = ("bound", "remark", "race", "threshold", "measurement", "consistency", "not measured")

# Why a row cannot read "does not hold" (Claim.check): such a row is a consistency check,
# outside the counts, whatever its kind. A bound whose constant was lost is one by its kind.
LOST_CONSTANT = (
    "a bound whose constant was lost: it reads consistent or undecided, never does not hold"
)


SYNTHETIC_MISSING = "no experiment of this layout in the configured build"


@dataclass(frozen=True)
class Statement:
    """One checkable sentence of the paper: an entry of statements.STATEMENTS."""

    key: str
    result: str  # the heading its rows are grouped under
    quote: str  # the paper's words (or the result's statement, math lost in extraction)
    where: str  # section, theorem, figure
    section: str  # whose proofs' hypotheses apply (coverage.SECTION_HYPOTHESES)
    layouts: tuple[str, ...]  # the experiment layouts that can measure it
    covers: tuple[str, ...] | None  # the algorithms it is made for (coverage.ALGORITHMS)
    data: str  # the data it is made for, in words
    kind: str  # the test's kind (KINDS)
    measure: Callable  # measure(rows) adds the rows of one experiment
    missing: str = SYNTHETIC_MISSING  # what a build without its runs lacks
    # why its rows cannot read "does not hold" ("": they can, and are counted); a bound's
    # kind says it already (LOST_CONSTANT)
    check: str = ""
    # a statement about the data (and their W-SVM), not a run: experiments with bit-identical
    # data and SVM files give its rows once (layouts.same_data)
    of_data: bool = False
    # beyond the paper: a statement of this project's, which nobody published (counted apart
    # from the published results it sits beside)
    ours: bool = False
    datasets: tuple[str, ...] = ()  # real data: the datasets it is stated for (name prefixes)
    # real data it is measured on as a comparison (other data, a smaller model): never a verdict
    stand_ins: tuple[str, ...] = ()


@dataclass
class Claim:
    result: str  # the numbered result or figure, e.g. "Thm. 1"
    experiment: str
    claim: str  # the claim, in one sentence
    source: str  # where the paper makes it
    quantity: str  # what was measured
    window: str  # over which iterations
    mean: float
    low: float  # smallest over seeds
    high: float  # largest over seeds
    reference: str  # the threshold or predicted value, and the tolerance
    holds: bool
    hypotheses: str = ""  # the measured hypotheses of the statement's section on this data
    in_hypotheses: bool = True
    predicted: float = math.nan  # closeness rows: the predicted value
    ratio: float = math.nan  # closeness rows: mean measured / predicted
    r2: float = math.nan  # smallest R^2 over seeds, for fitted quantities
    key: str = ""  # a stable identifier (LaTeX macro names)
    value_text: str = ""  # the value in words, with its unit or reference
    algorithm: str = ""  # the run's algorithm, in words (ALGORITHMS)
    covered: bool = True  # whether the statement is made (proved, or shown) for it
    undecided: bool = False  # the run cannot decide the claim (see the reference)
    kind: str = "measurement"  # one of KINDS
    window_ratio: float = math.nan  # bound rows: max over the window of measured/predicted
    statement: str = ""  # the registry entry (statements.STATEMENTS) the row measures
    detail: str = ""  # what the verdict words add (a bound's slope, a threshold's flip)
    data: str = ""  # the experiment's data in words ("where" shows it): "Example 1"
    # why the row cannot read "does not hold" (a consistency check outside the counts;
    # Statement.check, LOST_CONSTANT); "": it can, and is counted
    check: str = ""

    @property
    def category(self) -> str:
        """consistency (a near-tautology, or a row that cannot fail: `check`), not measured,
        outside (data outside the hypotheses), comparison (an algorithm the statement is not
        made for), or covered: what the summary counts."""
        if self.kind in ("consistency", "not measured"):
            return self.kind
        if self.check:
            return "consistency"
        if not self.in_hypotheses:
            return "outside"
        return "covered" if self.covered else "comparison"

    @property
    def outcome(self) -> str:
        if self.kind == "not measured":
            return "not measured"
        if self.undecided:
            return "undecided"
        return "holds" if self.holds else "does not hold"

    @property
    def verdict(self) -> str:
        if self.kind == "consistency":
            return f"consistency check: {'consistent' if self.holds else 'INCONSISTENT'}"
        text = self.outcome
        if self.kind == "bound" and self.outcome == "holds":
            text = "consistent with the bound"
        if self.detail:
            text += f": {self.detail}"
        if not self.covered:
            text = f"comparison: {text} (not made for {self.algorithm})"
        if not self.in_hypotheses:
            text += f" (outside hypotheses: {self.hypotheses_broken})"
        if self.check:  # its own words, and why it cannot fail: outside the count
            text += f"; a consistency check, not counted: {self.check.split(':')[0]}"
        return text

    @property
    def hypotheses_broken(self) -> str:
        return ", ".join(
            part.split(" BROKEN")[0] + " broken"
            for part in self.hypotheses.split("; ")
            if "BROKEN" in part
        )


def frame(rows: list[Claim]) -> pd.DataFrame:
    """Rows as a table, with their derived columns (category, outcome, verdict)."""
    return pd.DataFrame(
        [asdict(r) | {"category": r.category, "outcome": r.outcome, "verdict": r.verdict}
         for r in rows]
    )  # fmt: skip


def by_result(table: pd.DataFrame) -> pd.DataFrame:
    """Rows grouped by result (results in order of first appearance), stable within."""
    order = {r: i for i, r in enumerate(dict.fromkeys(table["result"]))}
    return table.iloc[np.argsort(table["result"].map(order).to_numpy(), kind="stable")]
