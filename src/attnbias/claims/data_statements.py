"""Statements about the data rather than a run: Lem. 6 (Example 1 satisfies Ass. 1 and
Ass. 2), Lem. 9 (under Cond. 1, DM's tokens are nearly orthogonal, as Ass. 1 asks) and
footnote 4 (the W-SVM is feasible where d exceeds both n and T). Read off each experiment's
measured hypotheses (attnbias.data.hypotheses, worst seed) and, for footnote 4, its stored
W-SVM solutions (Run.feasibility)."""

from __future__ import annotations

import numpy as np

from attnbias.claims.rows import Measured, Rows, Said, Verdict, spread
from attnbias.data.hypotheses import RHO_MAX, SPREAD_TOL

# a W-SVM constraint value at least 1 - this certifies feasibility (the solver's answers meet
# their constraints to about 1e-12 relative; KKT residuals are checked where they are solved)
FEASIBLE_TOL = 1e-6
# what Run.data reads for these models (attnbias.data.models.data_name; written out, not
# imported: the data models' module imports scikit-learn, which the claims' env lacks; a
# test holds the two equal)
EXAMPLE1 = "Example 1"
DM = "data model DM"


def lem6_rows(rows: Rows) -> None:
    """Lem. 6: data generated as Example 1 satisfy Ass. 1 and Ass. 2 (with probability at
    least 1 - delta, under conditions on d and the signal whose constants were lost): both
    hold on every seed of each Example 1 experiment (the data job's hypotheses, worst seed)."""
    h = rows.hypotheses
    if rows.run is None or rows.run.data != EXAMPLE1 or not h or "ass2_holds" not in h:
        return
    rho, spread_, gap = h["ass1_rho"], h["ass2_spread"], h["ass2_opt_gap"]
    rows.add(
        Said(
            "lem6 example1 hypotheses",
            "data drawn as Example 1 satisfy Ass. 1 (nearly orthogonal tokens) and Ass. 2 "
            "(equal non-optimal scores, below the optimal one).",
            needs=(),  # the lemma's conclusion is the hypotheses themselves
        ),
        Measured(
            "Ass. 1's rho (largest |<x, x'>| involving a non-optimal token over the smallest "
            "optimal ||x||^2) and Ass. 2's non-optimal score spread and optimal gap, worst seed",
            "the data",
            [rho],
            value_text=f"rho {rho:.3g} (Ass. 1 needs <= {RHO_MAX:g}); non-opt score spread "
            f"{spread_:.2g}, opt gap {gap:.2g}",
        ),
        Verdict(
            f"holds if Ass. 1 (rho <= {RHO_MAX:g}, our reading) and Ass. 2 (spread within "
            f"{SPREAD_TOL:g} of the score scale, gap > 0) hold on every seed; Lem. 6's "
            "conditions on d and the signal (constants lost) are not judged",
            bool(h["ass1_holds"] and h["ass2_holds"]),
            detail=_which_fail({"Ass. 1": h["ass1_holds"], "Ass. 2": h["ass2_holds"]}),
        ),
    )


def lem9_rows(rows: Rows) -> None:
    """Lem. 9: under Cond. 1, data model DM's tokens are nearly orthogonal (as Ass. 1 asks):
    Ass. 1's rho on every seed of each DM experiment, inside Cond. 1 as measured."""
    h = rows.hypotheses
    if rows.run is None or rows.run.data != DM or not h or "ass1_holds" not in h:
        return
    rho = h["ass1_rho"]
    rows.add(
        Said(
            "lem9 dm orthogonal",
            "under Cond. 1, DM's tokens are nearly orthogonal (Ass. 1).",
            needs=("cond1",),
        ),
        Measured(
            "Ass. 1's rho: largest |<x, x'>| involving a non-optimal token over the smallest "
            "optimal ||x||^2, worst seed",
            "the data",
            [rho],
            value_text=f"rho {rho:.3g} against {RHO_MAX:g}",
        ),
        Verdict(
            f"holds if rho <= {RHO_MAX:g} on every seed (our reading of Ass. 1; Lem. 9's own "
            "bound was lost)",
            bool(h["ass1_holds"]),
        ),
    )


def footnote4_rows(rows: Rows) -> None:
    """Footnote 4: the W-SVM is feasible when d exceeds both n and T (Tarzanagh et al.
    2023a, Thm. 1). Each seed's stored W_mm meeting every constraint certifies feasibility;
    the footnote's condition read as d >= max(n, T). A dataset with a smaller d is a
    comparison: the footnote says nothing of it (an infeasible one stops the svm job, which
    names it, so a build never holds one)."""
    f = rows.run.feasibility if rows.run is not None else None
    if not f or not f["n"]:
        return
    n, T, d, lowest = (np.asarray(f[k]) for k in ("n", "T", "d", "min_constraint"))
    large = d >= np.maximum(n, T)
    sizes = ", ".join(
        dict.fromkeys(f"d = {a}, n = {b}, T = {c}" for a, b, c in zip(d, n, T, strict=True))
    )
    feasible = lowest >= 1 - FEASIBLE_TOL
    rows.add(
        Said(
            "footnote4 feasible",
            "where d exceeds both n and T, the W-SVM is feasible.",
            covers=None if large.all() else ("d >= max(n, T)",),
            scope="" if large.all() else f"data with d < max(n, T) ({sizes})",
        ),
        Measured(
            "smallest W-SVM constraint value (x_opt - x_t)^T W_mm x_1 of the stored solution, "
            "over samples, tokens and seeds (>= 1: W_mm is a feasible point)",
            "the data",
            lowest,
            value_text=f"{sizes}; smallest constraint value {spread(lowest, '.10g')}: "
            f"feasible on {int(feasible.sum())} of {feasible.size} seeds",
        ),
        Verdict(
            f"holds if every seed's W_mm meets every constraint (value >= 1 - {FEASIBLE_TOL:g}); "
            "the footnote's condition read as d >= max(n, T) (Tarzanagh et al.'s Thm. 1: d >= "
            "max(n, T - 1)); data with a smaller d are a comparison (the footnote says nothing "
            "of them)",
            bool(feasible.all()),
            detail="" if feasible.all() else f"infeasible on {int((~feasible).sum())} seeds",
        ),
    )


def _which_fail(parts: dict) -> str:
    broken = [name for name, ok in parts.items() if not ok]
    return f"{' and '.join(broken)} broken" if broken else ""
