"""What each statement covers: the algorithm of a run (from the optimizer registry and the
run's settings, never from its config name), and the hypotheses each section's proofs use.

A row on an algorithm its statement is not made for is a comparison; a row on data outside
the hypotheses of its section's proofs says so (Claim.category). The hypotheses are measured
on the run's data by attnbias.data.hypotheses.
"""

from __future__ import annotations

from attnbias.data import hypotheses as hyp
from attnbias.optim import rules

# The algorithm of a run (OptimizerSpec.algorithm, from its optimizer's settings): each
# statement covers some of them. Each rule's module names the algorithms it runs as.
ALGORITHMS = {key: name for rule in rules.RULES.values() for key, name in rule.names.items()}

# The hypotheses each section's proofs use (keys of data.hypotheses.summarize). Results
# proved together share one set, applied alike to every row of the section on a run:
# Sec. 3 (Thm. 1, Thm. 7, Lem. 1, Lem. 3, Sec. 3.3) assumes Ass. 1 and Ass. 2; Sec. 4 proves
# Thm. 2 to 4 on Lem. 11, whose induction needs Cond. 1 with every optimal token a u-SVM
# support vector (Cond. 1 iii as Lem. 11 uses it), so all of Sec. 4 needs that too.
SECTION_HYPOTHESES = {
    "Sec. 3": ("ass1", "ass2"),
    "Sec. 4": ("ass1", "cond1", "cond1_sv"),
    # a remark about a figure or a real-data experiment: a statement about that run, which
    # no proof's hypotheses restrict (the run's data are the figure's)
    "experiment": (),
    # beyond the paper: each published result's own conditions, said in its entry
    # (claims.beyond), none of the paper's
    "beyond": (),
}


def algorithm_name(key: str) -> str:
    """How a row names the algorithm `key` (of `algorithm`): its ALGORITHMS entry, or for a
    real-data rule no module names, the key itself."""
    return ALGORITHMS.get(key, key)


def hypotheses_of(summary: dict | None, needs) -> tuple[str, bool]:
    """The text and verdict of the hypotheses in `needs` (ass1, ass2, cond1) on the data."""
    if not needs:
        return "", True
    if summary is None:
        return "not measured", False
    parts, inside = [], True
    for need in needs:
        if f"{need}_holds" not in summary:
            parts.append(f"{_NAMES[need]} BROKEN (not applicable to this data model)")
            inside = False
            continue
        ok = summary[f"{need}_holds"]
        inside &= ok
        parts.append(f"{_NAMES[need]} {'holds' if ok else 'BROKEN'} ({_VALUES[need](summary)})")
    return "; ".join(parts), inside


_NAMES = {
    "ass1": "Ass. 1",
    "ass2": "Ass. 2",
    "cond1": "Cond. 1",
    "cond1_sv": "Cond. 1 iii as Lem. 11 uses it",
}
_VALUES = {
    "ass1": lambda s: f"rho {s['ass1_rho']:.2g} {'<=' if s['ass1_holds'] else '>'} {hyp.RHO_MAX:g}",
    "cond1_sv": lambda s: (
        f"{s['cond1_sv_fraction']:.0%} of samples are u-SVM support vectors (worst seed); "
        f"largest u-SVM margin {s['cond1_u_margin_max']:.3g}"
    ),
    "ass2": lambda s: (
        f"non-opt score spread {s['ass2_spread']:.2g}, opt gap {s['ass2_opt_gap']:.2g}"
    ),
    "cond1": lambda s: (
        f"zero init {s['cond1_zero_init']}, opt/non-opt sq-norm ratio "
        f"{s['cond1_opt_norm_ratio']:.2g}, d/(nT) {s['cond1_d_over_nT']:.2g}; step size not "
        "judged (constant lost; the eta sweep on fig3_cond1 reads it)"
    ),
}
