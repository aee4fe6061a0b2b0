"""What an SVM's messages name, and the token sets refused before any solve: a constraint
row of zeros (a token equal to its sequence's optimal one, a zero query or a zero optimal
token) can never reach margin 1, whatever the norm."""

from __future__ import annotations

import numpy as np

from attnbias.svm.max_margin import InfeasibleSVMError, infeasible_error
from attnbias.svm.norm_values import Norm


def token_set(opt) -> str:
    """The optimal tokens in words, for a message: which token set an SVM was solved for."""
    return "optimal tokens [" + " ".join(map(str, np.ravel(opt).astype(np.int64).tolist())) + "]"


def subject_of(kind: str, norm: Norm, name: str, opt) -> str:
    return f"{kind} in the {norm.name} norm for {name}, {token_set(opt)}"


def refuse_zero_rows(rows: list[np.ndarray], kind, norm, name, opt, shape) -> None:
    """A constraint row of zeros (a token equal to the optimal one, or a zero query or
    optimal token) can never reach margin 1: the token set is degenerate, not merely hard."""
    zero = np.zeros(len(rows[0]), dtype=bool)
    for r in rows:
        zero |= ~np.any(r != 0, axis=1)
    if zero.any():
        n, T, d = shape
        which = np.flatnonzero(zero)
        where = (
            [f"(sample {k // (T - 1)}, constraint {k % (T - 1)})" for k in which[:5]]
            if kind == "W-SVM"
            else [f"sample {k}" for k in which[:5]]
        )
        raise InfeasibleSVMError(
            f"{subject_of(kind, norm, name, opt)}: the token set is degenerate, "
            f"{len(which)} of {len(zero)} constraint rows are zero ({', '.join(where)}"
            f"{', ...' if len(which) > 5 else ''}): no margin can reach 1 (n={n}, T={T}, d={d})"
        )


def infeasible(kind: str, norm: Norm, name: str, opt, shape) -> InfeasibleSVMError:
    """No W (or u) meets the constraints, in any norm: they are the Frobenius SVM's."""
    error = infeasible_error(kind, name, shape, norm=norm.name)
    return InfeasibleSVMError(f"{error} ({token_set(opt)})")
