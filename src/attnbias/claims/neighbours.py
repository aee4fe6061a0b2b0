"""The neighbours' statements as claims (results/claims_neighbours.md; docs/claims.md,
"The neighbours' statements"): a registry per paper (TF-as-SVM: Tarzanagh, Li,
Thrampoulidis, Oymak, arXiv 2308.16898; AttentionMD: Julistiono, Tarzanagh, Azizan, arXiv
2410.14581), each entry a sentence of their theorems or figures, measured on every seed of
the neighbours' tables (results/tfsvm_*.csv, attentionmd_*.csv), with the defects of their
code as entries too (what their solver and their normalisation would have reported,
measured; their unseeded starts, which no build can measure).

Verdicts as the paper's rows: a theorem's sentence is judged on the algorithm and regime
it is proved for; their local theorems ask a start near the locally optimal direction and
a small step, and our runs start as their figures' do (a random draw), so those rows are
comparisons, not counted. A figure's sentence is judged on the figure's own algorithm and
settings (ours restated: seeded starts, steps formed in logs, exact SVMs): counted. Their
local theorems' hypothesis, locally optimal tokens, is measured per run (the check on the
support of the run's own norm, neighbours.local_tokens); runs without it are left out and
named. A defect row (DEFECTS) says what their code reports and holds where that is what
an exact computation gives; it is counted apart."""

from __future__ import annotations

from functools import partial

import pandas as pd

from attnbias.claims import neighbours_attentionmd as amd
from attnbias.claims import neighbours_tfsvm as tfsvm
from attnbias.claims.claim import Statement, frame
from attnbias.claims.neighbour_rows import not_measured

TFSVM = "TF-as-SVM (Tarzanagh, Li, Thrampoulidis, Oymak 2023, arXiv 2308.16898)"
AMD = "AttentionMD (Julistiono, Tarzanagh, Azizan 2024, arXiv 2410.14581)"
# what a build lacks, per table (the target that builds it)
TARGETS = {
    "tfsvm_local": "results/tfsvm_local.pdf",
    "tfsvm_rank": "results/tfsvm_rank.pdf",
    "tfsvm_scs": "results/tfsvm_scs.csv",
    "attentionmd_local": "results/attentionmd_local.pdf",
    "attentionmd_local_curves": "results/attentionmd_local.pdf",
    "attentionmd_joint": "results/attentionmd_joint.pdf",
}
UNSEEDED = (
    "their starts come from torch's unseeded global stream, so no build can regenerate their "
    "curves; ours are seeded (the run's seed), the same distribution"
)


def _entry(key, paper, result, quote, where, kind, measure, table, *, covers, data, check=""):
    return Statement(
        key=key, result=f"{paper.split(' (')[0]}: {result}", quote=quote, where=where,
        section=paper, layouts=(table,), covers=covers, data=data, kind=kind,
        measure=measure, missing=f"build {TARGETS[table]}", check=check,
    )  # fmt: skip


NEIGHBOURS: tuple[Statement, ...] = (
    _entry(
        "tfsvm-gd-w",
        TFSVM,
        "GD on W finds the Frobenius SVM of locally optimal tokens",
        "gradient descent on W converges in direction to the Frobenius-norm W-SVM of the "
        "locally optimal tokens it selects",
        "their local-convergence theorem for GD on W",
        "threshold",
        partial(tfsvm.converges, param="W"),
        "tfsvm_local",
        covers=("GD/NGD on W from a start near the locally optimal direction",),
        data="any data with locally optimal tokens; measured on their local_converge "
        "data (n = 6, T = 8, d = 10)",
    ),
    _entry(
        "tfsvm-kq-nuclear",
        TFSVM,
        "K, Q find the nuclear-norm SVM",
        "training (K, Q) converges in direction to the nuclear-norm W-SVM of W = K Q^T",
        "their regularization-path theorem for (K, Q) (for GD on K, Q nothing is proved)",
        "threshold",
        partial(tfsvm.converges, param="KQ"),
        "tfsvm_local",
        covers=("the regularization path of (K, Q)",),
        data="any data with locally optimal tokens; measured on their local_converge data",
    ),
    _entry(
        "tfsvm-fig-local",
        TFSVM,
        "W nearer the Frobenius SVM, K Q^T nearer the nuclear",
        "W correlates most with the Frobenius SVM, K Q^T with the nuclear SVM",
        "their local_converge.ipynb figure",
        "race",
        tfsvm.nearer_own,
        "tfsvm_local",
        covers=(
            "their figure's runs: NGD on W, per-factor normalised GD on K, Q, lr 0.1, 2,000 steps",
        ),
        data="their local_converge data, their 100 seeds",
    ),
    _entry(
        "tfsvm-rank",
        TFSVM,
        "the nuclear SVM has the lower rank",
        "the nuclear-norm SVM solution has lower rank than the Frobenius-norm one",
        "their svm_rank.ipynb figure",
        "measurement",
        tfsvm.lower_rank,
        "tfsvm_rank",
        covers=("the exact SVM solutions",),
        data="their generator over n, T in {5, 10, 15}, d in {1, ..., 20}",
    ),
    _entry(
        "tfsvm-rank-bound",
        TFSVM,
        "no SVM rank above min(n, d)",
        "a W-SVM solution has rank at most min(n, d)",
        "ours (the constraints see W only through W z_i), beside their solver's ranks",
        "measurement",
        tfsvm.rank_at_most_n,
        "tfsvm_rank",
        covers=("the exact SVM solutions",),
        data="their generator's grid",
        check="a property of every exact solution: a check of our solver",
    ),
    _entry(
        "tfsvm-defect-scs",
        TFSVM,
        "defect: their solver's rank",
        "svm_rank reads the nuclear SVM's rank as that of cvxpy's SCS answer at an absolute 1e-7",
        "their svm_rank.ipynb",
        "measurement",
        tfsvm.their_scs_rank,
        "tfsvm_scs",
        covers=("their solver: cvxpy's SCS, default settings",),
        data="their generator, n = 6, T = 8 (the issue's re-run's n)",
    ),
    _entry(
        "tfsvm-defect-infeasible",
        TFSVM,
        "defect: infeasible instances ranked",
        "svm_rank counts an instance without a feasible W-SVM as rank 1",
        "their svm_rank.ipynb",
        "measurement",
        tfsvm.infeasible_as_rank,
        "tfsvm_rank",
        covers=("their svm_rank's count",),
        data="their generator's grid",
    ),
    _entry(
        "tfsvm-defect-seed",
        TFSVM,
        "defect: unseeded starts",
        "local_converge.ipynb draws its starts (nn.Linear) unseeded",
        "their local_converge.ipynb",
        "not measured",
        None,
        "tfsvm_local",
        covers=("their script",),
        data="their script",
    ),
    _entry(
        "amd-lp",
        AMD,
        "l_p mirror descent finds the l_p SVM",
        "normalised l_p mirror descent on W converges in direction to the l_p W-SVM of "
        "the locally optimal tokens it selects",
        "their local-convergence theorem for l_p mirror descent",
        "measurement",
        amd.converges,
        "attentionmd_local",
        covers=("l_p MD on W from a start near the l_p SVM direction, small step",),
        data="any data with locally optimal tokens; measured on their local_convergence "
        "data (n = 6, T = 8, d = 10)",
    ),
    _entry(
        "amd-own-p",
        AMD,
        "each p closest to its own SVM",
        "the W of l_p mirror descent is closest (directional Bregman divergence) to the "
        "l_p SVM, among the SVMs of p = 1.75, 2, 3",
        "their local-convergence figure (local_convergence.py, correlation_calculation.py)",
        "race",
        amd.own_p_closest,
        "attentionmd_local",
        covers=("their figure's runs: normalised l_p MD, lr 0.1, 1,500, 2,000 and 20,000 steps",),
        data="their local_convergence data, seeds 1 to 100",
    ),
    _entry(
        "amd-joint",
        AMD,
        "W and v trained jointly find their l_p SVMs",
        "W and v trained jointly converge in direction to their l_p SVM solutions",
        "their joint-training figure (joint_training.py)",
        "threshold",
        amd.joint_direction,
        "attentionmd_joint",
        covers=("their figure's run: per-block normalised l_p MD, p = 2, lr 0.1, 2,000 steps",),
        data="their fixed instance (n = 2, T = 3, d = 2)",
    ),
    _entry(
        "amd-defect-eps",
        AMD,
        "defect: their step stalls",
        "their normalised step Z - lr G / (||G||_q + 2.2e-16) keeps converging",
        "their tools/optimizers.py",
        "measurement",
        amd.their_step_stalls,
        "attentionmd_joint",
        covers=("their step, restated",),
        data="their fixed instance",
    ),
    _entry(
        "amd-defect-seed",
        AMD,
        "defect: unseeded starts",
        "local_convergence.py draws W0 (torch.randn) unseeded",
        "their local_convergence.py",
        "not measured",
        None,
        "attentionmd_local",
        covers=("their script",),
        data="their script",
    ),
)
KEYS = frozenset(s.key for s in NEIGHBOURS)
DEFECTS = frozenset(s.key for s in NEIGHBOURS if "defect" in s.key)
PAPERS = (TFSVM, AMD)


def measure(tables: dict) -> pd.DataFrame:
    """Every entry's rows from the neighbours' tables {name: frame} (TARGETS' names): an
    entry whose table is not given, or that no build can measure, is one row "not
    measured" saying why."""
    rows = []
    for st in NEIGHBOURS:
        table = st.layouts[0]
        if st.measure is None:
            rows.append(not_measured(
                Statement(**{**st.__dict__, "missing": UNSEEDED}), table))  # fmt: skip
        elif not all(name in tables for name in _needs(st)):
            rows.append(not_measured(st, table))
        else:
            rows += st.measure(st, tables)
    return frame(rows)


def _needs(st: Statement) -> tuple[str, ...]:
    """The tables an entry reads (its own, and the curves beside a local run's finals)."""
    table = st.layouts[0]
    return (table, amd.CURVES) if st.key == "amd-lp" else (table,)
