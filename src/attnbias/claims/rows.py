"""A claims row (Claim), the collector of one experiment's rows (Rows), and the helpers
that rows of several statements share.

Rows are written with the experiment's own texts: each optimizer by its legend's label
(Rows.label) and the paper's figure the experiment reproduces (Rows.source; its config key
`paper_figure`), never rewritten afterwards. Which runs a statement measures is chosen by
their algorithm (coverage.algorithm), never by their config names.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from attnbias.claims.coverage import ALGORITHMS, SECTION_HYPOTHESES, algorithm, hypotheses_of
from attnbias.claims.measure import (
    BURN_IN,
    MONOTONE_TOLERANCE,
    after_burn_in,
    ahead,
    largest_decrease,
)

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
    kind: str  # the test's kind (rows.KINDS)
    measure: Callable  # measure(rows) adds the rows of one experiment
    missing: str = SYNTHETIC_MISSING  # what a build without its runs lacks
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

    @property
    def category(self) -> str:
        """consistency, not measured, outside (data outside the hypotheses), comparison (an
        algorithm the statement is not made for), or covered: what the summary counts."""
        if self.kind in ("consistency", "not measured"):
            return self.kind
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
        if self.kind == "not measured":
            return f"not measured: {self.detail}"
        text = self.outcome
        if self.kind == "bound" and self.outcome == "holds":
            text = "consistent with the bound"
        if self.detail:
            text += f": {self.detail}"
        if not self.covered:
            text = f"comparison: {text} (not made for {self.algorithm})"
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


@dataclass
class Run:
    """What the rows of one experiment read: its table and the files' numbers."""

    table: pd.DataFrame
    optimizers: dict  # config name -> settings (with `rule`)
    layout: str
    W_mm_norms: list = field(default_factory=list)
    T_tokens: int = 0
    u_margins: dict | None = None
    dataset: str = ""  # real data: the dataset's name
    scale: str = ""  # real data: the model and the run's size, in words ("where" shows it)

    @property
    def t_last(self) -> int:
        return int(self.table["iteration"].max())

    @property
    def seeds(self) -> list:
        return sorted(self.table["seed"].unique())


class Rows:
    """Collects the rows of one experiment, with its hypotheses attached to each.

    labels: optimizer config name -> the legend's label (the name where it has none);
    figure: the paper's figure the experiment reproduces ("Fig. 9"), or None;
    duplicates: optimizer -> the experiment whose bit-identical run gives its rows.
    """

    def __init__(self, experiment: str, hypotheses: dict | None, labels: dict | None = None,
                 optimizers: dict | None = None, layout: str = "fixed_decoder",
                 figure: str | None = None, run: Run | None = None,
                 duplicates: dict | None = None, stands_for: dict | None = None):  # fmt: skip
        self.experiment = experiment
        self.hypotheses = hypotheses
        self.labels = labels or {}
        self.algorithms = {o: algorithm(s, layout) for o, s in (optimizers or {}).items()}
        self.figure = figure
        self.run = run
        self.duplicates = duplicates or {}
        # optimizer -> (experiment, algorithm) of the bit-identical runs whose rows it also
        # gives (a cap that never binds: the capped run is the uncapped one)
        self.stands_for = stands_for or {}
        self.statement = None  # the registry entry being measured (statements.Statement)
        self.rows: list[Claim] = []

    def label(self, optimizer: str) -> str:
        return self.labels.get(optimizer, optimizer)

    def source(self, where: str, figure_part: str = ", {}") -> str:
        """Where the paper makes a claim, citing this experiment's figure as `figure_part`
        formats it after `where` ("; {}", " ({})"); `where` alone if it reproduces none."""
        return where + figure_part.format(self.figure) if self.figure else where

    def runs(self, *algorithms: str, twins: bool = False) -> list[str]:
        """The optimizers (config names) whose algorithm is one of `algorithms` (any where
        none is given), in config order; less those whose run is bit-identical to another
        experiment's (it gives their rows), unless `twins` (a rival in a race)."""
        return [
            o
            for o, a in self.algorithms.items()
            if (not algorithms or a in algorithms) and (twins or o not in self.duplicates)
        ]

    def baseline(self) -> str | None:
        """The GD run (by its algorithm), the rival of the races against GD; None if none."""
        found = [o for o, a in self.algorithms.items() if a == "gd"]
        return found[0] if found else None

    def add(self, key, claim, quantity, window_text, values, reference, holds, *,
            result=None, source=None, needs=None, r2=None, predicted=math.nan,
            value_text="", opt=None, covers=None, undecided=False, kind=None,
            window_ratio=math.nan, scope="", detail=""):  # fmt: skip
        """One row of the statement being measured (self.statement gives the defaults of
        result, source, needs (its section's hypotheses), covers and kind). opt: the
        optimizer the row measures (its label opens the claim); covers: the algorithms
        (ALGORITHMS keys) the statement is made for, None: any; scope: what the comparison
        verdict names as not covered (default: the run's algorithm)."""
        st = self.statement
        result = result or st.result
        source = source or st.where
        needs = SECTION_HYPOTHESES[st.section] if needs is None else needs
        covers = st.covers if covers is None else covers
        kind = kind or st.kind
        values = np.asarray(values, dtype=float)
        text, inside = hypotheses_of(self.hypotheses, needs)
        mean = float(values.mean()) if values.size else math.nan
        kind_of_run = self.algorithms.get(opt, "")
        covered = covers is None or kind_of_run in covers
        twins = self.stands_for.get(opt, ())
        covered |= any(a in (covers or ()) for _, a in twins)
        experiment = self.experiment
        if twins:
            experiment += f" (= {', '.join(e for e, _ in twins)}: bit-identical run)"
        self.rows.append(
            Claim(
                result=result,
                experiment=experiment,
                claim=claim if opt is None else f"{self.label(opt)}: {claim}",
                source=source,
                quantity=quantity,
                window=window_text,
                mean=mean,
                low=float(values.min()) if values.size else math.nan,
                high=float(values.max()) if values.size else math.nan,
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
                covered=covered,
                undecided=bool(undecided),
                kind=kind,
                window_ratio=float(window_ratio),
                statement=st.key,
                detail=detail,
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


# ---- helpers that rows of several statements share ---------------------------------


def spread(values, fmt: str = ".3g") -> str:
    """Values over seeds as "a" (one seed or all equal) or "a to b"."""
    values = np.asarray(values, dtype=float)
    low, high = f"{values.min():{fmt}}", f"{values.max():{fmt}}"
    return low if low == high else f"{low} to {high}"


def no_decrease_row(rows: Rows, values: pd.DataFrame, what: str, window_text: str,
                    key: str, claim: str, **row) -> None:  # fmt: skip
    """A row of "`what` never decreases" (Lem. 3; Lem. 11 (ii)): its largest relative drop
    between logged iterations, within rounding (MONOTONE_TOLERANCE) on every seed."""
    drops = largest_decrease(values)
    rows.add(
        key,
        claim,
        f"largest relative decrease of the {what} between logged iterations",
        window_text,
        drops,
        f"holds if <= {MONOTONE_TOLERANCE:g} (rounding) on every seed",
        np.all(drops <= MONOTONE_TOLERANCE),
        value_text="no decrease on any seed"
        if not drops.any()
        else f"largest relative decrease {spread(drops)} over the seeds",
        **row,
    )


def race_row(rows: Rows, opt: str, rival: str, metric: str, what: str, key: str,
             claim: str, **row) -> None:  # fmt: skip
    """A race: `metric` (lower is ahead) of `opt` below `rival`'s at every logged t after
    the burn-in (measure.ahead), on every seed. Shows both methods' numbers at the last t,
    the margin (a ratio; a difference for logs) and how often `opt` was not ahead."""
    t_last = rows.run.t_last
    mine = after_burn_in(rows.run.table, opt, metric, t_last)
    theirs = after_burn_in(rows.run.table, rival, metric, t_last)
    mine, theirs = mine.align(theirs, join="inner")
    last, holds, undecided = ahead(mine, theirs)
    a, b = rows.label(opt), rows.label(rival)
    logs = metric.startswith("log")
    margin = (mine.iloc[-1] - theirs.iloc[-1]) if logs else (mine.iloc[-1] / theirs.iloc[-1])
    margin_text = f"{a} - {b}" if logs else f"{a} / {b}"
    behind = mine.to_numpy() >= theirs.to_numpy()
    seeds_behind = int(behind[-1].sum())
    n = behind.shape[1]
    if holds:
        detail = f"{a} ahead on every seed at every logged t >= {t_last // BURN_IN}"
    elif undecided:
        detail = (
            f"ahead at t = {t_last} on every seed, not ahead at {behind.mean():.0%} of the "
            f"logged points (last at t = {last.max():g})"
        )
    else:
        detail = f"{b} ahead at t = {t_last} on {seeds_behind} of {n} seeds"
    rows.add(
        key,
        claim,
        f"{what} at t = {t_last}: {a}'s and {b}'s; margin {margin_text}",
        f"t in [{t_last // BURN_IN}, {t_last}]",
        margin.to_numpy(),
        f"holds if below {b}'s at every logged t after the burn-in (t >= {t_last // BURN_IN}) "
        f"on every seed; does not hold if at or above it at t = {t_last} on a seed; "
        "undecided if below at the end but not throughout",
        holds,
        value_text=f"{a} {spread(mine.iloc[-1])}, {b} {spread(theirs.iloc[-1])}; margin "
        f"{margin_text} {spread(margin)}; {a} not ahead at {behind.mean():.0%} of the "
        f"{behind.size} (t, seed) points",
        opt=opt,
        undecided=undecided,
        kind="race",
        detail=detail,
        **row,
    )


def threshold_row(rows: Rows, key: str, claim: str, quantity: str, window_text: str,
                  values, threshold: float, *, above: bool, ours: str, **row) -> None:  # fmt: skip
    """A threshold test (values >= threshold if `above`, else <=) on every seed. `ours`:
    why we chose it, or "" for the paper's own; for ours the verdict states the factor by
    which the threshold would have to move to flip (measure.flip_factor)."""
    values = np.asarray(values, dtype=float)
    holds = bool(np.all(values >= threshold) if above else np.all(values <= threshold))
    sign = ">=" if above else "<="
    source = f"ours: {ours}" if ours else "the paper's"
    detail = ""
    if ours:
        worst = values.min() if above else values.max()
        detail = f"our threshold {threshold:g}; {flip_text(worst, threshold)}"
    rows.add(
        key, claim, quantity, window_text, values,
        f"holds if {sign} {threshold:g} on every seed (threshold {source})", holds,
        kind="threshold", detail=detail, **row,
    )  # fmt: skip


def flip_text(worst: float, threshold: float) -> str:
    """How far a threshold of ours sits from flipping the verdict: the worst seed's value
    over the threshold, as a factor (or where a sign change makes a factor meaningless)."""
    if worst == 0 or threshold == 0 or np.sign(worst) != np.sign(threshold):
        return f"it flips at {worst:.3g} (the worst seed), not at a factor of it"
    factor = max(worst / threshold, threshold / worst)
    return f"it flips if moved {moved_by(factor)} (to the worst seed's {worst:.4g})"


def moved_by(factor: float) -> str:
    """A factor near 1 as a percentage (a factor 1.004 reads "by 0.4%"), else as a factor."""
    return f"by {100 * (factor - 1):.2g}%" if factor < 1.1 else f"by a factor {factor:.3g}"
