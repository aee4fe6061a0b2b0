"""The max-norm SVMs by svm.max_norm's interior-point method (the u-SVM's simplex:
test_max_simplex.py): the structured normal equations are the dense ones; the W- and u-SVM, the
canonical point (svm.canonical) and the face probe (svm.uniqueness) against cvxpy +
Clarabel (the independent reference) on random and real (DM, Example 1) instances, each
certified by the KKT check; controls that make each comparison fail; a budget too small, a
perturbed answer and a failed probe fall back to cvxpy with a logged line naming the
dataset, the norm and the token set; infeasible rows are refused with a certificate, not
by overflowing."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import canonical, max_norm, norms, uniqueness
from attnbias.svm.dual_solves import DualSolveError
from attnbias.svm.max_margin import w_svm_constraints

cp = pytest.importorskip("cvxpy")

SMALL_DM = dict(n=10, T=4, d=40, mu_norm=1.0, noise_scale=0.5)


def _relative(A, B):
    return np.linalg.norm(A - B) / np.linalg.norm(B)


INSTANCES = {
    "example1": lambda: models.example1(np.random.default_rng(3), n=6, T=3, d=5),
    "dm": lambda: models.generate("dm", 1, SMALL_DM),
    "example1 n=12 d=30": lambda: models.example1(np.random.default_rng(5), n=12, T=4, d=30),
}


@pytest.fixture(scope="module", params=sorted(INSTANCES))
def instance(request):
    return INSTANCES[request.param]()


@pytest.fixture(scope="module")
def dm():
    return INSTANCES["dm"]()


def _dense(a, b):
    return np.einsum("ki,kj->kij", a, b).reshape(len(a), -1)


def test_the_structured_rows_are_the_dense_ones(dm):
    """M x, M^T y and M diag(theta) M^T from the rank-one rows equal the dense matrix's; the
    control: the rows transposed (b a^T) give another Gram matrix."""
    a, b = w_svm_constraints(dm["X"], dm["opt"])
    rows, M = max_norm.RankOneRows(a, b), _dense(a, b)
    rng = np.random.default_rng(0)
    x, y, theta = (
        rng.standard_normal(M.shape[1]),
        rng.standard_normal(len(a)),
        rng.random(M.shape[1]),
    )
    assert np.allclose(rows.apply(x), M @ x, rtol=1e-12, atol=1e-12)
    assert np.allclose(rows.adjoint(y), M.T @ y, rtol=1e-12, atol=1e-12)
    gram = (M * theta) @ M.T
    assert _relative(rows.weighted_gram(theta), gram) < 1e-13
    assert _relative(max_norm.RankOneRows(b, a).weighted_gram(theta), gram) > 1e-2


def test_w_svm_is_the_reference(instance, caplog):
    """The same optimal value as cvxpy's to the reference's accuracy, certified by the KKT
    check, no fallback taken; the optimum is a face, so the points may differ."""
    X, opt = instance["X"], instance["opt"]
    with caplog.at_level("WARNING", logger="attnbias.svm.norms"):
        s = norms.solve_w_svm_norm(X, opt, "max", name="tiny")
    assert not caplog.records, caplog.text
    ref = norms.solve_svm_norm_reference(X, opt, "max")
    assert norms.optimality_defect(s, X, opt, "max") is None
    assert s.optimality_residual < 1e-8  # inside the check's 1e-6 by far
    assert s.value == pytest.approx(ref.value, rel=1e-7)


def test_u_svm_is_the_reference(instance, caplog):
    X, y, opt = instance["X"], instance["y"], instance["opt"]
    with caplog.at_level("WARNING", logger="attnbias.svm.norms"):
        s = norms.solve_u_svm_norm(X, y, opt, "max", name="tiny")
    assert not caplog.records, caplog.text
    ref = norms.solve_svm_norm_reference(X, opt, "max", y=y)
    assert norms.optimality_defect(s, X, opt, "max", y=y) is None
    assert s.value == pytest.approx(ref.value, rel=1e-7)


def test_the_solution_is_optimal_for_the_max_norm_only(dm):
    """The control on the comparisons above: the max-norm answer fails the check as an l3
    SVM's, and its value is not the Frobenius SVM's."""
    X, opt = dm["X"], dm["opt"]
    s = norms.solve_w_svm_norm(X, opt, "max")
    assert norms.optimality_defect(s, X, opt, "l3") is not None
    assert abs(s.value / norms.solve_svm_norm_reference(X, opt, "fro").value - 1) > 1e-2


def test_the_svm_on_random_rows_meets_its_conditions():
    """Dense rows (any M): the LP's answer v, lambda meets margins >= 1, slackness and
    Hoelder's equality <G, v> = ||G||_1 ||v||_max; the control: v moved off fails."""
    M = np.random.default_rng(7).standard_normal((15, 40))
    v, lam = max_norm.svm(max_norm.DenseRows(M))

    def violation(v):  # v rescaled onto margins >= 1 (smallest 1)
        v = v / (M @ v).min()
        G, margins = M.T @ lam, M @ v
        slackness = np.max(np.abs(lam * (margins - 1))) / lam.sum()
        return max(slackness, abs(G @ v - np.abs(G).sum() * np.abs(v).max()) / (G @ v))

    assert violation(v) < 1e-8
    assert violation(v + 1e-3 * np.random.default_rng(0).standard_normal(v.shape)) > 1e-5


@pytest.fixture(scope="module")
def dm_canonical(dm):
    X, opt = dm["X"], dm["opt"]
    found = norms.solve_w_svm_norm(X, opt, "max", name="dm")
    fast = canonical.least_norm_point(X, opt, "max", found.value, fast=True)
    reference = canonical.least_norm_point(X, opt, "max", found.value, fast=False)
    return found, fast, reference


def test_the_canonical_point_is_the_references(dm, dm_canonical):
    """The face's least-Frobenius point (unique) from svm.max_norm is cvxpy's at the same
    bound, and passes the KKT check with the SVM's duals (svm.canonical); the control: the
    SVM's own answer, another point of the face, lies far from it."""
    X, opt = dm["X"], dm["opt"]
    found, fast, reference = dm_canonical
    assert _relative(fast, reference) < 1e-6
    point = canonical.canonical(found, X, opt, "max", name="dm")
    assert _relative(point.solution * 1.0, fast / ((w_rows_margins(dm, fast)).min())) < 1e-12
    assert norms.optimality_defect(point, X, opt, "max") is None
    assert _relative(found.solution, reference) > 1e-3


def w_rows_margins(data, W):
    a, b = w_svm_constraints(data["X"], data["opt"])
    return ((a @ W) * b).sum(axis=1)


def test_the_face_probe_is_the_references(dm, dm_canonical):
    """The probe's cosine from svm.max_norm is cvxpy's to the 4 digits the builds print; the
    control: the probe with a tolerance 100 times wider reads another cosine."""
    X, opt = dm["X"], dm["opt"]
    W = dm_canonical[1]
    fast = uniqueness.face_cosine(X, opt, "max", W)
    reference = uniqueness.face_cosine(X, opt, "max", W, fast=False)
    assert fast == pytest.approx(reference, abs=5e-5)
    assert fast < 1.0
    a, b = w_svm_constraints(X, opt)
    wider = (1 + 100 * uniqueness.FACE_TOLERANCE) * np.abs(W).max()
    assert abs(max_norm.face_cosine(max_norm.RankOneRows(a, b), W, wider) - fast) > 1e-3


# ---- refusals and fallbacks ----------------------------------------------------------------


def test_contradicting_rows_are_refused_by_the_method_itself():
    """A row and its negative: the LP's best margin is 0, refused (svm.norms decides
    feasibility first, tests/svm/test_norms.py's infeasible cases); the control: the rows
    without the negated one solve."""
    M = np.random.default_rng(3).standard_normal((4, 6))
    assert np.all(M @ max_norm.svm(max_norm.DenseRows(M))[0] >= 1 - 1e-8)
    with pytest.raises(DualSolveError, match="not positive"):
        max_norm.svm(max_norm.DenseRows(np.vstack([M, -M[:1]])))


def test_an_exhausted_budget_raises(dm, monkeypatch):
    """Two steps are not enough: the method says so rather than answer; the control: the
    default budget answers the same problem."""
    a, b = w_svm_constraints(dm["X"], dm["opt"])
    rows = max_norm.RankOneRows(a, b)
    max_norm.svm(rows)
    monkeypatch.setattr(max_norm, "ITERATIONS", 2)
    with pytest.raises(DualSolveError, match="did not converge in 2 steps"):
        max_norm.svm(rows)


def test_a_best_iterate_is_only_an_answer_the_check_certifies(dm, monkeypatch, caplog):
    """A stalled method answers its best iterate where it lies within NEAR times the
    tolerances; the KKT check decides: after 8 steps (gap ~1e-2) with NEAR unbounded the
    answer is returned and refused by the check, the reference's used with a logged line;
    the control: with the default NEAR the same budget raises instead of answering."""
    a, b = w_svm_constraints(dm["X"], dm["opt"])
    monkeypatch.setattr(max_norm, "ITERATIONS", 8)
    with pytest.raises(DualSolveError, match="did not converge in 8 steps"):
        max_norm.w_svm(a, b)
    monkeypatch.setattr(max_norm, "NEAR", np.inf)
    max_norm.w_svm(a, b)  # answers now
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        s = norms.solve_w_svm_norm(dm["X"], dm["opt"], "max", name="experiment dm, seed 5")
    assert norms.optimality_defect(s, dm["X"], dm["opt"], "max") is None
    (line,) = [r.getMessage() for r in caplog.records]
    assert "experiment dm, seed 5" in line and "fails its check" in line, line


def test_an_exhausted_budget_falls_back_with_a_logged_line(dm, monkeypatch, caplog):
    X, opt = dm["X"], dm["opt"]
    monkeypatch.setattr(max_norm, "ITERATIONS", 2)
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        s = norms.solve_w_svm_norm(X, opt, "max", name="experiment dm, seed 1")
    assert norms.optimality_defect(s, X, opt, "max") is None
    (line,) = [r.getMessage() for r in caplog.records]
    for part in ("W-SVM in the max norm for experiment dm, seed 1", "optimal tokens [",
                 "did not converge"):  # fmt: skip
        assert part in line, (part, line)


def test_a_perturbed_answer_is_refused_and_falls_back(dm, monkeypatch, caplog):
    """An answer moved off the optimum fails the KKT check: the reference's is used, with a
    line saying why; the u-SVM alike."""
    X, y, opt = dm["X"], dm["y"], dm["opt"]
    solve = max_norm.svm

    def moved(rows):
        v, lam = solve(rows)
        return v + 1e-3 * np.abs(v).max() * np.random.default_rng(0).standard_normal(v.shape), lam

    monkeypatch.setattr(max_norm, "svm", moved)
    monkeypatch.setattr(max_norm, "u_svm", lambda z: moved(max_norm.DenseRows(z)))
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        s = norms.solve_w_svm_norm(X, opt, "max", name="experiment dm, seed 2")
        u = norms.solve_u_svm_norm(X, y, opt, "max", name="experiment dm, seed 2")
    assert norms.optimality_defect(s, X, opt, "max") is None
    assert norms.optimality_defect(u, X, opt, "max", y=y) is None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    for line, what in zip(lines, ("W-SVM", "u-SVM"), strict=True):
        for part in (f"{what} in the max norm for experiment dm, seed 2", "fails its check"):
            assert part in line, (part, line)


def test_a_failed_canonical_point_falls_back_with_a_logged_line(dm, dm_canonical, monkeypatch,
                                                                 caplog):  # fmt: skip
    """svm.max_norm's point moved off the face fails the KKT check: cvxpy's is used, with a
    line naming the dataset, the norm and the token set."""
    X, opt = dm["X"], dm["opt"]
    found, _, reference = dm_canonical
    solve = max_norm.least_norm_point
    noise = np.random.default_rng(0).standard_normal(reference.size)

    def moved(rows, bound):
        return solve(rows, bound) + 1e-3 * bound * noise

    monkeypatch.setattr(max_norm, "least_norm_point", moved)
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        point = canonical.canonical(found, X, opt, "max", name="experiment dm, seed 1")
    assert _relative(point.solution, reference / w_rows_margins(dm, reference).min()) < 1e-6
    (line,) = [r.getMessage() for r in caplog.records]
    for part in ("W-SVM in the max norm for experiment dm, seed 1", "optimal tokens [",
                 "not optimal", "solved by cvxpy"):  # fmt: skip
        assert part in line, (part, line)


def test_a_failed_probe_falls_back_with_a_logged_line(dm, dm_canonical, monkeypatch, caplog):
    X, opt = dm["X"], dm["opt"]
    W = dm_canonical[1]
    monkeypatch.setattr(max_norm, "PROBE_ITERATIONS", 2)
    with caplog.at_level("WARNING", logger="attnbias.svm"):
        cosine = uniqueness.face_cosine(X, opt, "max", W)
    assert cosine == pytest.approx(uniqueness.face_cosine(X, opt, "max", W, fast=False), abs=1e-9)
    (line,) = [r.getMessage() for r in caplog.records]
    for part in ("max-norm face probe", "optimal tokens [", "did not converge", "cvxpy"):
        assert part in line, (part, line)


# ---- infeasible problems ---------------------------------------------------------------------


def test_an_infeasible_probe_is_refused_by_a_farkas_certificate():
    """The rows W_11 - W_21 >= 1 in a box |W| <= 1/4 admit no point: the interior-point
    method's duals grow along a Farkas ray, which it recognises within a few steps and
    refuses, with no overflow on the way (its duals reached 1e150 in 12 steps before); the
    control: at |W| <= 1 the same rows are probed."""
    a, b = np.array([[1.0, -1.0]]), np.array([[1.0, 0.0]])
    rows, target = max_norm.RankOneRows(a, b), np.array([[0.0, 0.25], [0.0, -0.25]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DualSolveError, match="Farkas certificate at step [0-9]\\b"):
            max_norm.face_cosine(rows, target, 0.25)
        assert -1.0 <= max_norm.face_cosine(rows, target, 1.0) <= 1.0
