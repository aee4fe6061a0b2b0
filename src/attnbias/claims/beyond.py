"""Beyond the paper: which norm's max-margin each optimizer finds on self-attention, and on
the neighbours' cross-attention data (the geometry experiments, layout `geometry`; SPEC,
"Beyond the paper"). A registry of its own
(BEYOND), counted apart from the paper's statements: one entry per published result, each
saying what it was proved for. A result proved for linear models only is a conjecture test
on attention; one that fails on attention is a finding, reported with its numbers.

Each run of an optimizer the entry covers, whose expected norm N (its rule's
implicit_norm, OptimizerSpec.implicit_norm) is the entry's, gets two rows, at the last
logged iteration, every seed:
  own norm first   its alignment with W*_N above its alignment with every other norm's
                   solution (a race between the norms' solutions); where W*_N is not
                   unique (svm.uniqueness), its margin ratio in N above every other
                   norm's instead. Beside it, whether the SVMs' geometry alone implies the
                   lead: the same measure of the norms' centroid (a direction favouring
                   none of them, training.geometry_measures), which, where it is itself closest to
                   W*_N, already ranks N first
  margin           its normalized margin in N at least MARGIN_FRACTION of the optimum
                   1 / ||W*_N||_N (logged as margin_ratio_N; a threshold of ours);
                   undecided where short of it but positive and rising at the horizon on
                   every seed (over the last logged interval and the last decade of t: the
                   results are asymptotic), a finding otherwise

On cross-attention data a statement proved for attention may cover fewer algorithms than on
self-attention (claims.beyond_rows.CROSS_COVERS: the others' rows are comparisons there),
and where the runs were measured against the tokens their attention selects (`tokens:
selected`) each "own norm first" row says, per seed, which of those were not globally
optimal and whether they pass the local-optimality check.
"""

from __future__ import annotations

from functools import partial

from attnbias.claims.beyond_rows import (
    GEOMETRY_LAYOUTS,
    LINEAR,
    MISSING,
    geometry_rows,
    optimal_tokens_rows,
)
from attnbias.claims.claim import Statement


def _entry(key, result, quote, where, covers, kind, proved_for) -> Statement:
    return Statement(
        key=key,
        result=f"Beyond the paper: {result}",
        quote=quote,
        where=where,
        section="beyond",
        layouts=GEOMETRY_LAYOUTS,
        covers=covers,
        data=f"proved for {proved_for}; measured on the geometry experiments' data",
        kind="race",
        measure=partial(geometry_rows, kind=kind),
        missing=MISSING,
    )


BEYOND: tuple[Statement, ...] = (
    _entry(
        "geo-fro",
        "GD and NGD find the Frobenius margin (control)",
        "GD and NGD converge in direction to W_mm, the Frobenius-norm attention SVM",
        "this paper, Thm. 1 (NGD); Tarzanagh et al. 2023, arXiv 2308.16898 (GD)",
        ("gd", "ngd"),
        "fro",
        "attention (Example 1 under Ass. 1 and 2 here; the control of the section)",
    ),
    _entry(
        "geo-max",
        "sign descent and Adam find the max-norm margin",
        "sign descent, normalized l_inf steepest descent and Adam converge in direction to "
        "the max-norm (entrywise l_inf) max-margin solution",
        "Fan, Schmidt, Thrampoulidis 2025, arXiv 2502.04664 (steepest descent in a norm, "
        "sign descent among them); Zhang, Zou, Cao 2024, arXiv 2406.10650 (Adam)",
        ("sign", "nsd", "adam"),
        "max",
        "linear models only (a conjecture test on attention): Fan et al. for normalized "
        "steepest descent with decaying steps (a constant step, as our sign descent's, "
        "reaches the max margin only up to a gap of the order of the step); Zhang et al. for "
        "Adam on logistic regression with decaying steps and its eps neglected (our Adam "
        "keeps eps = 1e-8, which dominates once the gradients fall below it)",
    ),
    _entry(
        "geo-lp-nsd",
        "l_p steepest descent finds the l_p margin",
        "normalized steepest descent in the entrywise l_p norm converges in direction to "
        "the l_p max-margin solution",
        "Fan, Schmidt, Thrampoulidis 2025, arXiv 2502.04664",
        ("nsd",),
        "lp",
        LINEAR,
    ),
    _entry(
        "geo-spectral",
        "spectral descent and Muon find the spectral margin",
        "spectral descent and Muon (W <- W - eta U V^T of the gradient's SVD) converge in "
        "direction to the spectral-norm max-margin solution",
        "Fan, Schmidt, Thrampoulidis 2025, arXiv 2502.04664",
        ("spectral", "muon"),
        "spectral",
        LINEAR,
    ),
    _entry(
        "geo-mirror",
        "l_p mirror descent finds the l_p attention SVM",
        "mirror descent with potential ||W||_p^p / p converges in direction to the l_p-norm "
        "attention SVM",
        "Julistiono, Tarzanagh, Azizan 2024, arXiv 2410.14581",
        ("mirror",),
        "lp",
        "attention (one softmax-attention layer, W trained; under their conditions on the "
        "data and the start)",
    ),
    _entry(
        "geo-kq",
        "separate K, Q find the nuclear-norm margin",
        "training K and Q separately (W = K Q^T) biases W toward the nuclear-norm attention SVM",
        "Tarzanagh et al. 2023, arXiv 2308.16898 (the regularization path of (K, Q)); Sheen "
        "et al. 2024, arXiv 2403.08699 (gradient flow on K, Q)",
        ("kq",),
        "nuclear",
        "attention: Tarzanagh et al. prove it for the regularization path of (K, Q) (their "
        "gradient-descent theorems are for W, not K, Q); Sheen et al. for gradient flow on "
        "K, Q under conditions on the data and the start; for gradient descent on K, Q with "
        "a finite step, as here, nothing is proved",
    ),
    Statement(
        key="geo-opt-tokens",
        result="Beyond the paper, a statement of ours: a trained decoder keeps Def. 1's optimal "
        "tokens",
        quote="the optimal token of each sequence (Def. 1, with the decoder being trained) "
        "stays the one the data model makes optimal",
        where="ours, unpublished: read from this paper's Def. 1 and Sec. 4 (joint training: u "
        "converges in direction to u_mm, whose optimal tokens are the data's)",
        section="beyond",
        layouts=GEOMETRY_LAYOUTS,
        covers=None,
        data="shown for the paper's joint-training algorithms; for the other optimizers "
        "measured on the geometry experiments' data with u trained",
        kind="measurement",
        measure=optimal_tokens_rows,
        missing=MISSING,
        ours=True,  # the project's reading of Def. 1 under a trained decoder: nobody published it
    ),
)
KEYS = frozenset(s.key for s in BEYOND)
OURS = frozenset(s.key for s in BEYOND if s.ours)  # counted apart from the published results
