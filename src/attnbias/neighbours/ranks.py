"""The ranks of the W-SVM solutions (TF-as-SVM's svm_rank.ipynb): the Frobenius and the
nuclear SVM of the globally optimal tokens over instances of their generator.

The rank is read at a threshold relative to the largest singular value (the singular
values above `relative` sigma_1), so the solver's tolerance is not counted as rank:
theirs, an absolute 1e-7 on SCS's slightly infeasible answers, reads ranks above n. An
infeasible instance (no W separates the tokens: d = 1, most of d = 2) has no rank: it is
counted, and left out of the ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attnbias.neighbours import svms
from attnbias.svm.max_margin import InfeasibleSVMError

RELATIVE_RANK_THRESHOLD = 1e-4  # of sigma_1


def svm_rank(S: np.ndarray, relative: float = RELATIVE_RANK_THRESHOLD) -> int:
    """The number of singular values of S above `relative` times the largest."""
    if not 0 < relative < 1:
        raise ValueError(f"the relative rank threshold must lie in (0, 1), got {relative}")
    sigma = np.linalg.svd(np.asarray(S, float), compute_uv=False)
    if not sigma[0] > 0:
        raise ValueError("a zero matrix has no SVM rank (an SVM solution is never 0)")
    return int(np.count_nonzero(sigma > relative * sigma[0]))


@dataclass
class RankCount:
    """Ranks per norm over the feasible instances, and the infeasible ones counted apart."""

    ranks: dict[str, list[int]] = field(default_factory=dict)
    infeasible: list[str] = field(default_factory=list)  # the instances' names

    @property
    def feasible(self) -> int:
        return len(next(iter(self.ranks.values()), []))

    def mean(self, norm: str) -> float:
        """The mean rank over the feasible instances (NaN where none is)."""
        values = self.ranks.get(norm, [])
        return float(np.mean(values)) if values else float("nan")


def count_ranks(
    instances: dict, norm_names=("fro", "nuclear"), relative: float = RELATIVE_RANK_THRESHOLD
) -> RankCount:
    """The SVM ranks of each instance {name: data} at its globally optimal tokens (`opt`)."""
    found = RankCount({norm: [] for norm in norm_names})
    for name, data in instances.items():
        try:
            solutions = {n: svms.w_svm(data, data["opt"], n, name=name) for n in norm_names}
        except InfeasibleSVMError:
            found.infeasible.append(name)
            continue
        for norm, solution in solutions.items():
            found.ranks[norm].append(svm_rank(solution.solution, relative))
    return found
