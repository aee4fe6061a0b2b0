"""The max-norm u-SVM's LP, max gamma s.t. Z w >= gamma 1, |w| <= 1, by a dense
bounded-variable primal simplex (svm.max_norm.u_svm reads it). The LP is small (m = n
rows, d + 1 + m = 121 variables at fig2's size) and svm.max_norm's interior-point method's
per-step numpy overhead dominated it (19 steps, 2.2 ms); a pivot here is a rank-one update
of an m x (d + 1 + m) tableau. In numpy a pivot still costs 20 to 29 us of call overhead
(docs/speed.md), so the pivots run compiled (_max_simplex.c, built and loaded by
attnbias.c_library); where no C compiler builds it, in numpy (_numpy_pivots: the same
steps, the tests' reference), with one logged line saying why."""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnbias import c_library
from attnbias.svm.dual_solves import DualSolveError

SOURCE = Path(__file__).with_name("_max_simplex.c")
LABEL = "the max-norm simplex's pivots"
UNBOUNDED = "the max-norm LP's simplex found an unbounded edge"

# pivots allowed per variable before the simplex is refused (DualSolveError: cycling on a
# degenerate vertex, or rounding); fig2's and DM's seeds 1 to 5 take 36 to 60 steps (pivots
# and bound flips) for 121 variables
PIVOTS_PER_VARIABLE = 5
# a tableau entry below this fraction of its column's largest does not bound a step
PIVOT_TOLERANCE = 1e-11
# optimal where no step improves gamma by more than this, relative to the data's scale
# (steepest edge: per unit length of the step's tableau column)
OPTIMAL = 1e-12
# the final basis's primal and dual feasibility, relative to the data's scale
BASIS_TOLERANCE = 1e-9


@dataclass
class _Tableau:
    """The simplex's state on [w, gamma, s] (simplex_svm): the constraint matrix A = [Z, -1,
    -I] and the bounds, the point x, the basic columns, each variable's direction (+1:
    nonbasic at its lower bound, -1: at its upper, 0: basic), the tableau T = B^-1 A and the
    reduced costs r (c - c_B T with c = -e_gamma)."""

    A: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    x: np.ndarray
    basis: np.ndarray
    direction: np.ndarray
    T: np.ndarray
    r: np.ndarray
    scale: float  # the data's, max |Z|

    @property
    def gamma(self) -> int:  # gamma's index
        return self.A.shape[1] - self.A.shape[0] - 1


def _start(Z: np.ndarray) -> _Tableau:
    """From w = the signs of Z^T 1, gamma = the smallest margin (basic, never leaving: it
    is free) and the other rows' slacks basic."""
    m, d = Z.shape
    N, g = d + 1 + m, d
    A = np.hstack([Z, -np.ones((m, 1)), -np.eye(m)])
    lower = np.concatenate([-np.ones(d), [-np.inf], np.zeros(m)])
    upper = np.concatenate([np.ones(d), [np.inf], np.full(m, np.inf)])
    w = np.where(Z.sum(axis=0) >= 0.0, 1.0, -1.0)
    margins = Z @ w
    k = int(np.argmin(margins))
    x = np.concatenate([w, [margins[k]], margins - margins[k]])
    basis = np.arange(d + 1, N)
    basis[k] = g
    direction = np.concatenate([-w, np.zeros(1 + m)])
    direction[d + 1 + k] = 1.0
    # B = A[:, basis] is -I with its column k -1: B^-1 a = (a_k - a_j for row j, -a_k for
    # row k), exact and a third of the start's time where a solve took 25 us
    T = A[k] - A
    T[k] = -A[k]
    r = T[k].copy()  # c - c_B T with c = -e_gamma, c_B = -e_k
    r[g] = 0.0
    return _Tableau(A, lower, upper, x, basis, direction, T, r, float(np.abs(Z).max()))


def simplex_svm(Z: np.ndarray, pivots: str | None = None) -> tuple[np.ndarray, float, np.ndarray]:
    """max gamma s.t. Z w - gamma 1 - s = 0, |w| <= 1, s >= 0 (gamma free) by the
    bounded-variable primal simplex (Chvatal, Linear Programming, ch. 8) on the dense
    tableau B^-1 [Z, -1, -I], with steepest-edge pricing (each column's reduced cost over
    its tableau column's norm: 36 to 60 steps on fig2's and DM's seeds 1 to 5, where
    Dantzig's took 55 to 120), from _start. The pivots run compiled (_max_simplex.c) where
    a C compiler builds it, else in numpy (`pivots`: "c" or "numpy" to choose). The answer
    is recomputed from the final basis (one m x m solve each for the point and the
    multipliers) and checked for primal and dual feasibility there: (w, gamma, the rows'
    multipliers y >= 0, sum(y) = 1). DualSolveError where the pivots run out or the final
    basis fails its check."""
    Z = np.asarray(Z, float)
    tableau = _start(Z)
    budget = round(PIVOTS_PER_VARIABLE * tableau.A.shape[1])
    if pivots is None:
        pivots = "c" if compiled_pivots() is not None else "numpy"
    steps = (_compiled_pivots if pivots == "c" else _numpy_pivots)(tableau, budget)
    if steps is None:
        raise DualSolveError(f"the max-norm LP's simplex did not finish in {budget} pivots")
    t = tableau
    return _basic_solution(t.A, t.basis, t.direction, t.x, t.lower, t.upper, t.gamma, t.scale)


def _numpy_pivots(t: _Tableau, budget: int) -> int | None:
    """The simplex's steps on `t` in place, in numpy (_max_simplex.c runs the same compiled):
    how many it took, None where `budget` ran out. DualSolveError on an unbounded edge."""
    m = len(t.basis)
    lower, upper, x, direction, T, r, basis = t.lower, t.upper, t.x, t.direction, t.T, t.r, t.basis
    lower_b, upper_b = lower[basis], upper[basis]
    optimal = OPTIMAL * t.scale
    for step in range(budget):
        score = (direction * r) / np.sqrt(1.0 + np.einsum("ij,ij->j", T, T))
        q = int(np.argmin(score))
        if score[q] >= -optimal:
            return step
        dq = direction[q]
        rate = -dq * T[:, q]  # of the basic variables, as x_q moves away from its bound
        tiny = PIVOT_TOLERANCE * float(np.abs(rate).max())
        x_b = x[basis]
        limits = np.full(m, np.inf)
        np.divide(lower_b - x_b, rate, out=limits, where=rate < -tiny)
        np.divide(upper_b - x_b, rate, out=limits, where=rate > tiny)
        p = int(np.argmin(limits))
        own = upper[q] - lower[q]
        theta = max(min(float(limits[p]), own), 0.0)
        if not np.isfinite(theta):
            raise DualSolveError(UNBOUNDED)
        x[basis] = x_b + theta * rate
        x[q] += theta * dq
        if own <= limits[p]:  # x_q reaches its other bound first: a bound flip
            direction[q] = -dq
            continue
        leaving = basis[p]
        at_lower = bool(rate[p] < 0)
        x[leaving] = lower[leaving] if at_lower else upper[leaving]
        direction[leaving], direction[q] = (1.0 if at_lower else -1.0), 0.0
        row = T[p] / T[p, q]
        column = T[:, q].copy()
        column[p] = 0.0
        T -= np.outer(column, row)
        T[p] = row
        r -= r[q] * row
        basis[p], lower_b[p], upper_b[p] = q, lower[q], upper[q]
    return None


_PIVOTS: object = None  # the compiled function once loaded; False where it cannot be


def compiled_pivots():
    """_max_simplex.c's function, loaded on first use (c_library: compiled and cached);
    None where no C compiler builds it, said once in the log (the numpy pivots run)."""
    global _PIVOTS
    if _PIVOTS is None:
        try:
            function = c_library.load(SOURCE, "max_simplex", LABEL).max_simplex
        except c_library.LibraryError as why:
            logging.getLogger(__name__).warning(
                "the max-norm simplex pivots in numpy: %s is unavailable (%s)", LABEL, why
            )
            _PIVOTS = False
        else:
            function.restype = ctypes.c_int
            long, double, ptr = ctypes.c_long, ctypes.c_double, ctypes.c_void_p
            # m, N, T, r, x, direction, basis, lower, upper, budget, optimal,
            # pivot_tolerance, norms, rate, steps
            function.argtypes = [long, long, *[ptr] * 7, long, double, double, ptr, ptr, ptr]
            _PIVOTS = function
    return _PIVOTS or None


def _compiled_pivots(t: _Tableau, budget: int) -> int | None:
    """_numpy_pivots's steps by _max_simplex.c, in place on `t`."""
    function = compiled_pivots()
    if function is None:
        raise DualSolveError(f"{LABEL} are unavailable")
    m, N = t.T.shape
    t.T = np.ascontiguousarray(t.T)  # the C loop reads row-major float64 arrays
    t.basis = t.basis.astype(np.int64)
    norms, rate, steps = np.empty(N), np.empty(m), ctypes.c_long(0)
    data = [a.ctypes.data for a in (t.T, t.r, t.x, t.direction, t.basis, t.lower, t.upper)]
    status = function(m, N, *data, budget, OPTIMAL * t.scale, PIVOT_TOLERANCE,
                      norms.ctypes.data, rate.ctypes.data, ctypes.byref(steps))  # fmt: skip
    if status == 2:
        raise DualSolveError(UNBOUNDED)
    return steps.value if status == 0 else None


def _basic_solution(A, basis, direction, x, lower, upper, g, scale):
    """(w, gamma, y) of the final basis, recomputed from it (the tableau's updates carry
    rounding), after checking its primal and dual feasibility (simplex_svm)."""
    B = A[:, basis]
    x = x.copy()
    x[basis] = 0.0
    x[basis] = np.linalg.solve(B, -(A @ x))
    c_b = np.where(basis == g, -1.0, 0.0)
    y = np.linalg.solve(B.T, c_b)
    reduced = -A.T @ y
    reduced[g] -= 1.0
    primal = float(np.max(np.maximum(lower - x, x - upper)))
    dual = float(np.max(-direction * reduced))
    allowed = BASIS_TOLERANCE * (1.0 + scale)
    if not (primal <= allowed and dual <= allowed):
        raise DualSolveError(f"the max-norm LP's final basis fails its check (primal "
                             f"{primal:.2g}, dual {dual:.2g}; allowed {allowed:.2g})")  # fmt: skip
    return x[:g], float(x[g]), y
