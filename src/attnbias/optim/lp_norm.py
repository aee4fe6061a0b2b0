"""The p of an entrywise l_p norm, and its one spelling "l<p>": the p that mirror descent's
potential and NSD's l_p norm accept are exactly those whose norm can be named, and every
geometry experiment then solves that norm's SVM (attnbias.svm.norm_values reads the names).

p lies in [P_MIN, P_MAX] with at most one decimal: cvxpy's pnorm, which solves the l_p
SVMs, rounds p (through 1/p) to a fraction of denominator at most 1024: p = 1.0000001
becomes the l_1 norm, 99.99 becomes 100 (two decimals are kept only up to 10.24), and
past about 1e5 it fails. Every p of the range it keeps exactly (tests/optim/test_lp_norm.py),
so a norm's name is the norm solved. Plain Python: the norm names are read where no numpy is needed.
"""

from __future__ import annotations

import math
import re

P_MIN = 1.1
P_MAX = 100.0
DECIMALS = 1
LP_NAME = re.compile(r"l(\d+(?:\.\d+)?)")  # "l3", "l1.5"
P_RANGE = (
    f"p from {P_MIN:g} to {P_MAX:g} with at most one decimal (e.g. 3 or 1.5: the l_p SVM "
    "is solved exactly for those)"
)


def check_p(p, what: str) -> None:
    """ValueError naming `what` and the range where `p` is no l_p norm's p (module doc)."""
    ok = isinstance(p, int | float) and not isinstance(p, bool) and math.isfinite(p)
    if not (ok and P_MIN <= p <= P_MAX and round(p, DECIMALS) == p):
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
