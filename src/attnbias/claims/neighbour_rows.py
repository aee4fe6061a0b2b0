"""The parts every row of the neighbours' sections shares (claims.neighbours): a row from
its statement and its measured values, and the hypothesis their local theorems share (the
run's tokens locally optimal, read by neighbours.local_tokens' check on the support of the
run's own norm)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnbias.claims.claim import Claim, Statement
from attnbias.claims.rows import spread

# "converges in direction" read at a finite horizon: the cosine (or correlation) with the
# SVM direction at the last step at least this (a threshold of ours; the papers state limits)
DIRECTION = 0.99


def row(
    st: Statement,
    experiment: str,
    values,
    *,
    holds: bool,
    value_text: str,
    reference: str,
    quantity: str,
    window: str,
    claim: str = "",
    detail: str = "",
    covered: bool = True,
    algorithm: str = "",
    hypotheses: str = "",
    in_hypotheses: bool = True,
    undecided: bool = False,
    suffix: str = "",
) -> Claim:
    """One row of statement `st` on `experiment` (its key: the statement's and `suffix`)."""
    values = np.atleast_1d(np.asarray(values, dtype=float))
    finite = values[np.isfinite(values)]
    stats = (finite.mean(), finite.min(), finite.max()) if finite.size else (np.nan,) * 3
    return Claim(
        result=st.result, experiment=experiment, claim=claim or st.quote, source=st.where,
        quantity=quantity, window=window, mean=float(stats[0]), low=float(stats[1]),
        high=float(stats[2]), reference=reference, holds=bool(holds), hypotheses=hypotheses,
        in_hypotheses=in_hypotheses, key=f"{st.key}{suffix}", value_text=value_text,
        algorithm=algorithm, covered=covered, undecided=undecided, kind=st.kind,
        statement=st.key, detail=detail, check=st.check,
    )  # fmt: skip


def not_measured(st: Statement, experiment: str) -> Claim:
    """The row of a statement this build cannot measure: why, outside the counts."""
    return Claim(
        result=st.result, experiment=experiment, claim=st.quote, source=st.where,
        quantity="", window="", mean=np.nan, low=np.nan, high=np.nan, reference="",
        holds=False, key=st.key, kind="not measured", statement=st.key,
        detail=st.missing,
    )  # fmt: skip


def local_optimality(finals: pd.DataFrame) -> tuple[np.ndarray, str]:
    """Which runs end on locally optimal tokens (their local theorems' hypothesis), and in
    words how many, with the others named (seed)."""
    ok = finals["locally_optimal"].astype(bool).to_numpy()
    failed = ", ".join(str(s) for s in finals.loc[~ok, "seed"])
    words = (
        f"tokens locally optimal (the run's own norm's SVM support) on {ok.sum()} of {ok.size} runs"
    )
    return ok, words + (f"; not on seed(s) {failed}, left out" if failed else "")


def threshold_words(values, threshold: float, what: str) -> tuple[bool, str]:
    """Whether every value reaches `threshold` (ours), and the verdict's words."""
    values = np.asarray(values, dtype=float)
    short = int(np.sum(values < threshold))
    if not short:
        return True, f"{what} at least {threshold:g} on every run ({spread(values, '.6g')})"
    return (
        False,
        f"{what} below {threshold:g} on {short} of {values.size} runs (least {values.min():.4g})",
    )
