"""TF-as-SVM's statements measured (claims.neighbours registers them): each takes the
neighbours' tables (results/tfsvm_local_final.csv, tfsvm_rank.csv, tfsvm_scs.csv as
frames) and gives its rows."""

from __future__ import annotations

import numpy as np

from attnbias.claims.neighbour_rows import DIRECTION, local_optimality, row, threshold_words
from attnbias.claims.rows import spread

LOCAL = "tfsvm_local"
RANK = "tfsvm_rank"
SCS = "tfsvm_scs"
OTHER = {"fro": "nuclear", "nuclear": "fro"}
NAME = {"fro": "Frobenius", "nuclear": "nuclear"}
PARAM = {"W": ("fro", "W by normalised GD"), "KQ": ("nuclear", "K, Q by normalised GD (W = K Q^T)")}
RANDOM_START = (
    "a start near the locally optimal direction; ours (their figure's): nn.Linear's random draw"
)


def converges(st, tables: dict, *, param: str, covered: bool = False) -> list:
    """The run's correlation with its own norm's SVM (of its tokens) at the last step at
    least DIRECTION, on every run whose tokens are locally optimal."""
    finals = tables[LOCAL]
    runs = finals[finals["param"] == param]
    ok, hypotheses = local_optimality(runs)
    norm, algorithm = PARAM[param]
    values = runs.loc[ok, f"corr_{norm}"].to_numpy(float)
    what = f"the correlation with the {NAME[norm]} SVM"
    holds, detail = threshold_words(values, DIRECTION, what)
    return [row(
        st, LOCAL, values, holds=holds, detail=detail, covered=covered,
        algorithm=f"{algorithm} from {RANDOM_START}", hypotheses=hypotheses,
        quantity=f"correlation of the last iterate with the {NAME[norm]} W-SVM of its tokens",
        window="the last step (t = 2,000)", value_text=f"{spread(values, '.4g')}; {hypotheses}",
        reference=f">= {DIRECTION:g} on every run (ours: 'converges' at a finite horizon)",
    )]  # fmt: skip


def nearer_own(st, tables: dict) -> list:
    """Their figure: W's correlation with the Frobenius SVM above that with the nuclear one,
    K Q^T's the other way, on every seed (one row per parametrisation)."""
    finals = tables[LOCAL]
    rows = []
    for param, (norm, algorithm) in PARAM.items():
        runs = finals[finals["param"] == param]
        own, other = (
            runs[f"corr_{norm}"].to_numpy(float),
            runs[f"corr_{OTHER[norm]}"].to_numpy(float),
        )
        lead = own - other
        behind = int(np.sum(lead <= 0))
        detail = (
            f"nearer its own {NAME[norm]} SVM on every seed"
            if not behind
            else f"nearer the {NAME[OTHER[norm]]} SVM on {behind} of {lead.size} seeds"
        )
        rows.append(row(
            st, LOCAL, lead, holds=not behind, detail=detail, suffix=f"-{param}",
            claim=f"{'W' if param == 'W' else 'K Q^T'} correlates more with the {NAME[norm]} SVM "
            f"than with the {NAME[OTHER[norm]]} one.", algorithm=algorithm,
            quantity=f"correlation with the {norm} SVM minus that with the {OTHER[norm]} SVM",
            window="the last step (t = 2,000)",
            value_text=f"own ({NAME[norm]}) {spread(own, '.4g')}; other ({NAME[OTHER[norm]]}) "
            f"{spread(other, '.4g')}; lead {spread(lead)}",
            reference="lead > 0 on every seed",
        ))  # fmt: skip
    return rows


def lower_rank(st, tables: dict) -> list:
    """Their svm_rank figure: the nuclear SVM's rank below the Frobenius SVM's, in every
    (n, T, d) cell that has a feasible instance (the exact SVMs, rank at 1e-4 sigma_1)."""
    cells = tables[RANK]
    feasible = cells[cells["instances"] > cells["infeasible"]]
    lead = (feasible["mean_fro"] - feasible["mean_nuclear"]).to_numpy(float)
    behind = feasible[lead <= 0]
    equal = int(np.sum(lead == 0))

    def cells_text(rows) -> str:
        return "; ".join(f"n = {r.n}, T = {r.T}, d = {r.d}" for r in rows.itertuples())

    detail = (
        f"lower in all {lead.size} cells with a feasible instance"
        if behind.empty
        else f"not lower in {len(behind)} of {lead.size} cells ({equal} equal, "
        f"{len(behind) - equal} higher): {cells_text(behind)}"
    )
    infeasible, instances = int(cells["infeasible"].sum()), int(cells["instances"].sum())
    return [row(
        st, RANK, lead, holds=behind.empty, detail=detail, algorithm="the exact SVM solutions",
        hypotheses=f"feasible instances only ({infeasible} of {instances} infeasible, left out)",
        quantity="mean Frobenius SVM rank minus mean nuclear SVM rank, per (n, T, d) cell",
        window=f"{len(cells)} cells",
        value_text=f"nuclear {spread(feasible['mean_nuclear'])}, Frobenius "
        f"{spread(feasible['mean_fro'])} (cell means); lead {spread(lead)}",
        reference="lead > 0 in every cell",
    )]  # fmt: skip


def rank_at_most_n(st, tables: dict) -> list:
    """No W-SVM's rank exceeds min(n, d) (a property of the SVM: a consistency check of the
    exact solver, beside their solver's ranks)."""
    cells = tables[RANK]
    feasible = cells[cells["instances"] > cells["infeasible"]]
    bound = np.minimum(feasible["n"], feasible["d"]).to_numpy(float)
    top = np.fmax(feasible["max_fro"], feasible["max_nuclear"]).to_numpy(float)
    over = int(np.sum(top > bound))
    return [row(
        st, RANK, bound - top, holds=not over, algorithm="the exact SVM solutions",
        detail="no instance above min(n, d)" if not over else f"{over} cells above min(n, d)",
        quantity="min(n, d) minus the largest rank of either SVM, per cell",
        window=f"{len(feasible)} cells with a feasible instance",
        value_text=f"slack {spread(bound - top)}", reference="slack >= 0 in every cell",
    )]  # fmt: skip


def their_scs_rank(st, tables: dict) -> list:
    """Defect: what svm_rank would report on our instances (neighbours.scs_rank): SCS's
    nuclear SVM, rank at their absolute 1e-7, against the exact rank; holds where the two
    agree on every feasible instance."""
    table = tables[SCS]
    infeasible = table[table["infeasible"].astype(bool)]
    solved = table[~table["infeasible"].astype(bool) & table["scs_min_margin"].notna()]
    theirs, exact = solved["scs_rank"].to_numpy(float), solved["exact_rank"].to_numpy(float)
    bound = np.minimum(solved["n"], solved["d"]).to_numpy(float)
    wrong, over = int(np.sum(theirs != exact)), int(np.sum(theirs > bound))
    sizes = ", ".join(sorted({f"n = {r.n}, T = {r.T}, d = {r.d}" for r in solved.itertuples()}))
    # where no W is feasible, what their reading records (matrix_rank of cvxpy's None: 1)
    unranked = (
        ""
        if infeasible.empty
        else (
            f"; on {len(infeasible)} infeasible instances SCS says "
            f"{', '.join(sorted(set(infeasible['scs_status'])))} and their reading is rank "
            f"{spread(infeasible['scs_rank'])}"
        )
    )
    return [row(
        st, SCS, theirs - exact, holds=not wrong, algorithm="cvxpy's SCS at its default settings",
        detail=f"their reading differs from the exact rank on {wrong} of {theirs.size} "
        f"instances, and exceeds min(n, d) on {over}; SCS's smallest margin "
        f"{solved['scs_min_margin'].min():.7g}" if wrong else "their reading is the exact rank",
        quantity="SCS's nuclear SVM rank at an absolute 1e-7 minus the exact rank at 1e-4 sigma_1",
        window=f"{theirs.size} feasible instances ({sizes})",
        value_text=f"theirs {spread(theirs)}, exact {spread(exact)}, min(n, d) {spread(bound)}"
        + unranked,
        reference="equal on every feasible instance",
    )]  # fmt: skip


def infeasible_as_rank(st, tables: dict) -> list:
    """Defect: svm_rank counts an instance without a feasible W-SVM as rank 1; holds where
    no instance of the grid is infeasible (so that no rank 1 is such a count)."""
    cells = tables[RANK]
    infeasible = cells["infeasible"].to_numpy(float)
    by_d = cells.groupby("d")["infeasible"].sum()
    where = ", ".join(f"d = {d}: {int(k)}" for d, k in by_d.items() if k)
    total, instances = int(infeasible.sum()), int(cells["instances"].sum())
    return [row(
        st, RANK, infeasible, holds=not total, algorithm="the exact SVM solver (infeasibility "
        "certified)", detail=f"{total} of {instances} instances are infeasible ({where}): "
        "their svm_rank would count each as rank 1" if total else "no instance is infeasible",
        quantity="infeasible instances per cell", window=f"{len(cells)} cells",
        value_text=f"{total} of {instances} instances", reference="none infeasible",
    )]  # fmt: skip
