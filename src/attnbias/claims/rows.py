"""The collector of one experiment's rows (Rows), what they read (Run), and what a row is
made of when it is added: what it claims (Said), what was measured on which run (Measured)
and how it is judged (Verdict).

Rows are written with the experiment's own texts: each optimizer by its legend's label
(Rows.label) and the paper's figure the experiment reproduces (Rows.source; its config key
`paper_figure`), never rewritten afterwards. Which runs a statement measures is chosen by
their algorithm (OptimizerSpec.algorithm), never by their config names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from attnbias.claims.claim import LOST_CONSTANT, Claim
from attnbias.claims.coverage import ALGORITHMS, SECTION_HYPOTHESES, hypotheses_of


@dataclass(frozen=True)
class Said:
    """What a row claims: its `key` (unique within the experiment), its sentence (`claim`),
    and where it departs from the statement being measured (None: the statement's own):
    `result` (its heading), `source` (where the paper makes it), `needs` (the hypotheses
    that apply; the statement's section's), `covers` (the algorithms, ALGORITHMS keys, it
    is made for; the statement's None: any) and `scope` (what a comparison's verdict names
    as not covered; "": the run's algorithm)."""

    key: str
    claim: str
    result: str | None = None
    source: str | None = None
    needs: tuple | None = None
    covers: tuple | None = None
    scope: str = ""


@dataclass(frozen=True)
class Measured:
    """What a row measured: `quantity` over `window` (both in words), its `values` over the
    seeds, on optimizer `opt`'s run (its label opens the claim; None: no one optimizer's),
    and the value in words (`value_text`). Fitted quantities give `r2` per seed (the row
    keeps the smallest), closeness rows the `predicted` value, bound rows `window_ratio`
    (the largest measured over predicted over the window)."""

    quantity: str
    window: str
    values: object  # array-like, one value per seed
    opt: str | None = None
    value_text: str = ""
    r2: object = None  # array-like, one R^2 per seed
    predicted: float = math.nan
    window_ratio: float = math.nan


@dataclass(frozen=True)
class Verdict:
    """How a row is judged: `reference` (the threshold or prediction and the tolerance, in
    words), whether it `holds`, whether the run cannot decide it (`undecided`), the test's
    `kind` (claim.KINDS; None: the statement's) and `detail`, what the verdict words add (a
    bound's slope, a threshold's flip)."""

    reference: str
    holds: bool
    undecided: bool = False
    kind: str | None = None
    detail: str = ""


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
    data: str = ""  # synthetic data: what the data are, in words ("where" shows it)
    # synthetic data: each seed's n, T, d and smallest W-SVM constraint value of its W_mm
    # (claims.inputs.ExperimentInputs.feasibility), or None where not read
    feasibility: dict | None = None
    tuning: str = ""  # real data: the seed and sweep that chose the settings, in words
    # real data: that tuning and the state of its check against the sweep's record
    # (workflow.real_config.RealDataConfig.tuning; {}: no sweep tunes the settings)
    chosen_by: dict = field(default_factory=dict)

    @property
    def t_last(self) -> int:
        return int(self.table["iteration"].max())

    @property
    def seeds(self) -> list:
        return sorted(self.table["seed"].unique())


class Rows:
    """Collects the rows of one experiment, with its hypotheses attached to each.

    labels: optimizer config name -> the legend's label (the name where it has none);
    specs: optimizer config name -> its spec (optim.spec.resolve), which says its algorithm;
    figure: the paper's figure the experiment reproduces ("Fig. 9"), or None;
    duplicates: optimizer -> the experiment whose bit-identical run gives its rows.
    """

    def __init__(self, experiment: str, hypotheses: dict | None, labels: dict | None = None,
                 specs: dict | None = None, layout: str = "fixed_decoder",
                 figure: str | None = None, run: Run | None = None,
                 duplicates: dict | None = None, stands_for: dict | None = None):  # fmt: skip
        self.experiment = experiment
        self.hypotheses = hypotheses
        self.labels = labels or {}
        # the optimizers as resolved once from the config (optim.spec.resolve)
        self.specs = specs or {}
        self.algorithms = {o: s.algorithm(layout) for o, s in self.specs.items()}
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

    def add(self, said: Said, measured: Measured, verdict: Verdict) -> None:
        """One row of the statement being measured (self.statement gives what `said` and
        `verdict` leave to it)."""
        st = self.statement
        needs = SECTION_HYPOTHESES[st.section] if said.needs is None else said.needs
        covers = st.covers if said.covers is None else said.covers
        opt, predicted = measured.opt, measured.predicted
        values = np.asarray(measured.values, dtype=float)
        text, inside = hypotheses_of(self.hypotheses, needs)
        mean = float(values.mean()) if values.size else math.nan
        kind_of_run = self.algorithms.get(opt, "")
        covered = covers is None or kind_of_run in covers
        twins = self.stands_for.get(opt, ())
        covered |= any(a in (covers or ()) for _, a in twins)
        kind = verdict.kind or st.kind
        experiment = self.experiment
        if twins:
            experiment += f" (= {', '.join(e for e, _ in twins)}: bit-identical run)"
        self.rows.append(
            Claim(
                result=said.result or st.result,
                experiment=experiment,
                claim=said.claim if opt is None else f"{self.label(opt)}: {said.claim}",
                source=said.source or st.where,
                quantity=measured.quantity,
                window=measured.window,
                mean=mean,
                low=float(values.min()) if values.size else math.nan,
                high=float(values.max()) if values.size else math.nan,
                reference=verdict.reference,
                holds=bool(verdict.holds),
                hypotheses=text,
                in_hypotheses=inside,
                predicted=float(predicted),
                ratio=mean / predicted if np.isfinite(predicted) and predicted else math.nan,
                r2=math.nan if measured.r2 is None else float(np.min(measured.r2)),
                key=f"{self.experiment} {said.key}",
                value_text=measured.value_text,
                algorithm=said.scope or ALGORITHMS.get(kind_of_run, kind_of_run),
                covered=covered,
                undecided=bool(verdict.undecided),
                kind=kind,
                window_ratio=float(measured.window_ratio),
                statement=st.key,
                detail=verdict.detail,
                data=self.run.data if self.run is not None else "",
                check=st.check or (LOST_CONSTANT if kind == "bound" else ""),
            )
        )


def spread(values, fmt: str = ".3g") -> str:
    """Values over seeds as "a" (one seed or all equal) or "a to b"."""
    values = np.asarray(values, dtype=float)
    low, high = f"{values.min():{fmt}}", f"{values.max():{fmt}}"
    return low if low == high else f"{low} to {high}"


def mean_spread(values, fmt: str = ".3g") -> str:
    """Values over seeds as "mean (min to max)", or "a" where all seeds agree."""
    values = np.asarray(values, dtype=float)
    low, high = f"{values.min():{fmt}}", f"{values.max():{fmt}}"
    return low if low == high else f"{values.mean():{fmt}} ({low} to {high})"
