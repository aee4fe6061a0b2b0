"""A claims row (Claim), the collector of one experiment's rows (Rows), and the helpers
that rows of several results share.

Rows are written with the experiment's own texts: each optimizer by its legend's label
(Rows.label) and the paper's figure the experiment reproduces (Rows.source; its config key
`paper_figure`), never rewritten afterwards.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from attnbias.claims.coverage import ALGORITHMS, algorithm, hypotheses_of
from attnbias.claims.measure import (
    BURN_IN,
    MONOTONE_TOLERANCE,
    after_burn_in,
    ahead,
    largest_decrease,
)


@dataclass
class Claim:
    result: str  # the numbered result, e.g. "Thm. 1"
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
    hypotheses: str = ""  # the measured hypotheses of the result on this run's data
    in_hypotheses: bool = True
    predicted: float = math.nan  # closeness rows: the predicted value
    ratio: float = math.nan  # closeness rows: mean measured / predicted
    r2: float = math.nan  # smallest R^2 over seeds, for fitted quantities
    key: str = ""  # a stable identifier (LaTeX macro names)
    value_text: str = ""  # how to show the value where numbers alone mislead ("not reached")
    algorithm: str = ""  # the run's algorithm, in words (ALGORITHMS)
    covered: bool = True  # whether the result is proved (or, for a figure, shown) for it
    undecided: bool = False  # the run cannot decide the claim (see the reference)
    kind: str = "test"  # "test", or "consistency" (a near-tautology, outside the count)
    window_ratio: float = math.nan  # bound rows: max over the window of measured/predicted

    @property
    def category(self) -> str:
        """consistency, outside (data outside the hypotheses), comparison (an algorithm the
        result does not cover), or covered: what the summary line counts the row as."""
        if self.kind == "consistency":
            return "consistency"
        if not self.in_hypotheses:
            return "outside"
        return "covered" if self.covered else "comparison"

    @property
    def outcome(self) -> str:
        if self.undecided:
            return "undecided"
        return "holds" if self.holds else "does not hold"

    @property
    def verdict(self) -> str:
        if self.kind == "consistency":
            return f"consistency check: {'consistent' if self.holds else 'INCONSISTENT'}"
        text = self.outcome
        if not self.covered:
            text = f"comparison: {text} (not proved for {self.algorithm})"
        if not self.in_hypotheses:
            text += f" (outside hypotheses: {self.hypotheses_broken})"
        return text

    @property
    def hypotheses_broken(self) -> str:
        return ", ".join(
            part.split(" BROKEN")[0] + " broken"
            for part in self.hypotheses.split("; ")
            if "BROKEN" in part
        )


class Rows:
    """Collects the rows of one experiment, with its hypotheses attached to each.

    labels: optimizer config name -> the legend's label (the name where it has none);
    figure: the paper's figure the experiment reproduces ("Fig. 9"), or None.
    """

    def __init__(self, experiment: str, hypotheses: dict | None, labels: dict | None = None,
                 optimizers: dict | None = None, layout: str = "fixed_decoder",
                 figure: str | None = None):  # fmt: skip
        self.experiment = experiment
        self.hypotheses = hypotheses
        self.labels = labels or {}
        self.algorithms = {o: algorithm(o, s, layout) for o, s in (optimizers or {}).items()}
        self.figure = figure
        self.rows: list[Claim] = []

    def label(self, optimizer: str) -> str:
        return self.labels.get(optimizer, optimizer)

    def source(self, where: str, figure_part: str = ", {}") -> str:
        """Where the paper makes a claim, citing this experiment's figure as `figure_part`
        formats it after `where` ("; {}", " ({})"); `where` alone if it reproduces none."""
        return where + figure_part.format(self.figure) if self.figure else where

    def add(self, result, key, claim, source, quantity, window_text, values, reference, holds,
            *, needs=("ass1", "ass2"), r2=None, predicted=math.nan, value_text="", opt=None,
            covers=None, undecided=False, kind="test", window_ratio=math.nan,
            scope=""):  # fmt: skip
        """One row. opt: the optimizer the row measures (its label opens the claim); covers:
        the algorithms (ALGORITHMS keys) the result is proved for, None: any; scope: what
        the comparison verdict names as not covered (default: the run's algorithm)."""
        values = np.asarray(values, dtype=float)
        text, inside = hypotheses_of(self.hypotheses, needs)
        mean = float(values.mean())
        kind_of_run = self.algorithms.get(opt, "")
        self.rows.append(
            Claim(
                result=result,
                experiment=self.experiment,
                claim=claim if opt is None else f"{self.label(opt)}: {claim}",
                source=source,
                quantity=quantity,
                window=window_text,
                mean=mean,
                low=float(values.min()),
                high=float(values.max()),
                reference=reference,
                holds=bool(holds),
                hypotheses=text,
                in_hypotheses=inside,
                predicted=float(predicted),
                ratio=mean / predicted if np.isfinite(predicted) and predicted else math.nan,
                r2=math.nan if r2 is None else float(np.min(r2)),
                key=f"{self.experiment} {key}",
                value_text=value_text,
                algorithm=scope or ALGORITHMS.get(kind_of_run, kind_of_run),
                covered=covers is None or kind_of_run in covers,
                undecided=bool(undecided),
                kind=kind,
                window_ratio=float(window_ratio),
            )
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


# ---- helpers that rows of several results share ------------------------------------


def no_decrease_row(rows: Rows, values: pd.DataFrame, what: str, window_text: str,
                    result: str, key: str, claim: str, source: str, **row) -> None:  # fmt: skip
    """A row of "`what` never decreases" (Lem. 3; Lem. 11 (ii)): its largest relative drop
    between logged iterations, within rounding (MONOTONE_TOLERANCE) on every seed."""
    drops = largest_decrease(values)
    rows.add(
        result,
        key,
        claim,
        source,
        f"largest relative decrease of the {what} between logged iterations",
        window_text,
        drops,
        f"holds if <= {MONOTONE_TOLERANCE:g} (rounding) on every seed",
        np.all(drops <= MONOTONE_TOLERANCE),
        **row,
    )


# the claim of the W rows against GD (Sec. 3.3; Fig. 3)
AHEAD_OF_GD = "1 - cos(W_t, W_mm) is below GD's at every logged t after the burn-in."


def ahead_of_gd_row(rows: Rows, table, opt: str, metric: str, t_last: int, result: str,
                    key: str, claim: str, source: str, measured, *, reference: str = "",
                    **row) -> None:  # fmt: skip
    """A row of "`metric` is below GD's at every logged t after the burn-in" (measure.ahead),
    whose value is the last logged t at which it is not. measured(mine, gd) gives the
    quantity's text from both windows; reference: the verdict rule (default: the usual)."""
    gd = after_burn_in(table, "gd", metric, t_last)
    mine = after_burn_in(table, opt, metric, t_last)
    last, holds, undecided = ahead(mine, gd)
    reference = reference or (
        f"holds if below on every seed at every logged t >= {t_last // BURN_IN}; does not "
        f"hold if at or above GD's at t = {t_last} on a seed"
    )
    window_text = f"t in [{t_last // BURN_IN}, {t_last}]"
    rows.add(result, key, claim, source, measured(mine, gd), window_text, last, reference, holds,
             opt=opt, undecided=undecided, **row)  # fmt: skip


def over_gd(label: str, mine: pd.DataFrame, gd: pd.DataFrame, t_last: int) -> str:
    """The largest final ratio of a metric to GD's, as the rows against GD print it."""
    return f"{label} / GD at t = {t_last}: {float((mine.iloc[-1] / gd.iloc[-1]).max()):.3g} at most"
