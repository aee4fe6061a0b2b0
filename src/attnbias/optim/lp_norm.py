"""The p of an entrywise l_p norm, and its one spelling "l<p>": the p that mirror descent's
potential and NSD's l_p norm accept are exactly those whose norm can be named, and every
geometry experiment then solves that norm's SVM (attnbias.svm.norm_values reads the names).

p lies in [P_MIN, P_MAX] with at most two decimals, and p = a/b in lowest terms has
a <= MAX_NUMERATOR: cvxpy's pnorm, which solves the l_p SVMs, rounds 1/p = b/a to a
fraction of denominator at most 1024, so p = 1.0000001 becomes the l_1 norm, 99.99 becomes
100, and past about 1e5 it fails. Every p accepted here it keeps exactly (tested against
cvxpy in tests/optim/test_lp_norm.py), so a norm's name is the norm solved: 1.75
(AttentionMD's 7/4), 3.14 (157/50), every p with one decimal, every two-decimal p up to
10.24. Plain Python: the norm names are read where no numpy is needed.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

P_MIN = 1.01
P_MAX = 100.0
DECIMALS = 2
MAX_NUMERATOR = 1024  # cvxpy pnorm's max_denom, applied to 1/p
LP_NAME = re.compile(r"l(\d+(?:\.\d+)?)")  # "l3", "l1.5"
P_RANGE = (
    f"p from {P_MIN:g} to {P_MAX:g} with at most two decimals, whose fraction a/b in lowest "
    f"terms has a <= {MAX_NUMERATOR} (e.g. 3, 1.5 or 1.75; not 99.99, which cvxpy's l_p SVM "
    "would round to 100)"
)


def check_p(p, what: str) -> None:
    """ValueError naming `what` and the range where `p` is no l_p norm's p (module doc)."""
    ok = isinstance(p, int | float) and not isinstance(p, bool) and math.isfinite(p)
    exact = ok and P_MIN <= p <= P_MAX and round(p, DECIMALS) == p
    if exact:  # cvxpy keeps 1/p = b/a exactly where a <= MAX_NUMERATOR
        exact = Fraction(round(p * 10**DECIMALS), 10**DECIMALS).numerator <= MAX_NUMERATOR
    if not exact:
        raise ValueError(f"{what} needs {P_RANGE}, got {p!r}")


def lp_name(p: float) -> str:
    """The norm's one spelling: "l3", "l1.5" (p checked: check_p)."""
    check_p(p, "an l_p norm")
    return "l" + f"{p:.{DECIMALS}f}".rstrip("0").rstrip(".")


def parse_lp(name) -> float | None:
    """The p of an l_p norm's name; None where `name` is no "l<digits>" name; ValueError
    where its p is out of range or it is spelled otherwise (naming the one spelling)."""
    match = LP_NAME.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        return None
    p = float(match.group(1))
    check_p(p, f"norm {name!r}: an l_p norm")
    if lp_name(p) != name:
        raise ValueError(f"norm {name!r}: write it as {lp_name(p)!r}, as file entries name it")
    return p
