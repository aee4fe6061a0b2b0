"""The attention SVMs under other norms (attnbias.svm.norms): each norm's W- and u-SVM
against its KKT conditions, against the dual problem solved on its own (strong duality),
the Frobenius one against W_mm's Gram-space solver, the unitarily invariant ones against
the unrestricted solve, infeasible data, a perturbed solution refused, bad norm names.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cross_attention import cross_instance, without_queries

from attnbias.data import models
from attnbias.svm import max_margin, norm_values, norms
from attnbias.svm.geometry import solve_for_dataset

cp = pytest.importorskip("cvxpy")


NORMS = ["fro", "max", "spectral", "nuclear", "l3", "l1.5"]


@pytest.fixture(scope="module")
def instance():
    """A small Example-1 dataset: n=6, T=3, d=5 (12 constraints on 25 entries)."""
    return models.example1(np.random.default_rng(3), n=6, T=3, d=5)


def _dual_value(A: np.ndarray, norm: str) -> float:
    """max sum(lambda) s.t. ||sum_k lambda_k A_k||_* <= 1, lambda >= 0, solved on its own
    (A: (m, d, d) or (m, d))."""
    lam = cp.Variable(len(A), nonneg=True)
    G = sum(lam[k] * A[k] for k in range(len(A)))
    kind = norm_values.parse_norm(norm)
    if kind.kind == "lp":
        dual = cp.pnorm(cp.vec(G, order="F"), kind.dual_p)
    elif kind.kind == "max":
        dual = cp.sum(cp.abs(G))
    elif G.ndim == 1 or kind.kind == "fro":
        dual = cp.norm(cp.vec(G, order="F"), 2)
    else:
        dual = cp.normNuc(G) if kind.kind == "spectral" else cp.sigma_max(G)
    problem = cp.Problem(cp.Maximize(cp.sum(lam)), [dual <= 1])
    problem.solve(solver=cp.CLARABEL)
    assert problem.status == cp.OPTIMAL
    return problem.value


def _w_operators(data) -> np.ndarray:
    a, b = max_margin.w_svm_constraints(data["X"], data["opt"])
    return a[:, :, None] * b[:, None, :]


@pytest.mark.parametrize("norm", NORMS)
def test_w_svm_meets_kkt_and_strong_duality(instance, norm):
    s = norms.solve_w_svm_norm(instance["X"], instance["opt"], norm, name="tiny")
    assert norms.optimality_defect(s, instance["X"], instance["opt"], norm) is None
    assert s.optimality_residual <= norms.OPTIMALITY_TOLERANCE
    assert s.margins.min() == pytest.approx(1.0, abs=1e-12)
    assert s.value == pytest.approx(norm_values.norm_value(s.solution, norm), rel=1e-12)
    # the dual problem, solved on its own, reaches the same value (strong duality)
    assert _dual_value(_w_operators(instance), norm) == pytest.approx(s.value, rel=1e-6)


@pytest.mark.parametrize("norm", ["fro", "max", "spectral", "l3"])
def test_u_svm_meets_kkt_and_strong_duality(instance, norm):
    X, y, opt = instance["X"], instance["y"], instance["opt"]
    s = norms.solve_u_svm_norm(X, y, opt, norm, name="tiny")
    assert s.solution.shape == (X.shape[2],)
    assert norms.optimality_defect(s, X, opt, norm, y=y) is None
    z = max_margin.u_svm_constraints(X, y, opt)
    assert _dual_value(z, norm) == pytest.approx(s.value, rel=1e-6)


@pytest.mark.parametrize("norm", ["spectral", "nuclear"])
def test_unitarily_invariant_restriction_loses_nothing(instance, norm):
    """The solve restricts W to span(a) x span(b); the unrestricted d x d problem (another
    formulation, solved by SCS here) finds no smaller norm."""
    a, b = max_margin.w_svm_constraints(instance["X"], instance["opt"])
    W = cp.Variable((a.shape[1], a.shape[1]))
    objective = cp.sigma_max(W) if norm == "spectral" else cp.normNuc(W)
    problem = cp.Problem(cp.Minimize(objective), [cp.sum(cp.multiply(a @ W, b), axis=1) >= 1])
    problem.solve(solver=cp.SCS, eps=1e-9, max_iters=200_000)
    s = norms.solve_w_svm_norm(instance["X"], instance["opt"], norm)
    assert problem.value == pytest.approx(s.value, rel=1e-5)


def test_fro_is_w_mm(instance):
    """The Frobenius SVM is today's W_mm. Values agree to the solver's relative gap; the
    matrices to its square root (a strongly convex objective: a gap eps in value allows a
    distance sqrt(eps) in W)."""
    X, opt = instance["X"], instance["opt"]
    s = norms.solve_w_svm_norm(X, opt, "fro")
    ref = max_margin.solve_w_svm(X, opt)
    assert s.value == pytest.approx(np.linalg.norm(ref.W), rel=1e-8)
    assert np.linalg.norm(s.solution - ref.W) <= 1e-4 * np.linalg.norm(ref.W)
    u = norms.solve_u_svm_norm(X, instance["y"], opt, "fro")
    u_ref = max_margin.solve_u_svm(X, instance["y"], opt)
    assert u.value == pytest.approx(np.linalg.norm(u_ref.u), rel=1e-8)


def test_the_norms_differ(instance):
    """A control on the tests above: the norms' solutions are different matrices."""
    X, opt = instance["X"], instance["opt"]
    fro = norms.solve_w_svm_norm(X, opt, "fro").solution
    for norm in ("max", "nuclear"):
        other = norms.solve_w_svm_norm(X, opt, norm).solution
        cosine = np.vdot(fro, other) / (np.linalg.norm(fro) * np.linalg.norm(other))
        assert cosine < 0.999, norm


@pytest.mark.parametrize("norm", NORMS)
def test_a_perturbed_solution_is_refused(instance, norm):
    X, opt = instance["X"], instance["opt"]
    s = norms.solve_w_svm_norm(X, opt, norm)
    rng = np.random.default_rng(0)
    moved = s.solution + 1e-3 * np.abs(s.solution).max() * rng.standard_normal(s.solution.shape)
    for wrong in (
        norms.NormSVMSolution(moved, s.dual, s.margins, s.value, 0.0),
        norms.NormSVMSolution(1.01 * s.solution, s.dual, s.margins, s.value, 0.0),  # not tight
        norms.NormSVMSolution(s.solution, s.dual * 1.01, s.margins, s.value, 0.0),
    ):
        defect = norms.optimality_defect(wrong, X, opt, norm)
        assert defect and "not optimal" in defect, defect
    # another norm's solution is not this norm's optimum
    other = "max" if norm != "max" else "fro"
    assert norms.optimality_defect(norms.solve_w_svm_norm(X, opt, other), X, opt, norm)


def test_wrong_shapes_are_refused(instance):
    X, opt = instance["X"], instance["opt"]
    s = norms.solve_w_svm_norm(X, opt, "fro")
    short = norms.NormSVMSolution(s.solution, s.dual[:-1], s.margins, s.value, 0.0)
    assert "one per constraint" in norms.optimality_defect(short, X, opt, "fro")
    nan = norms.NormSVMSolution(s.solution * np.nan, s.dual, s.margins, s.value, 0.0)
    assert "not finite" in norms.optimality_defect(nan, X, opt, "fro")


@pytest.mark.parametrize("norm", ["max", "nuclear", "l3"])
def test_infeasible_data_names_dataset_and_sizes(norm):
    """Two sequences with the same tokens but different optimal tokens."""
    seq = np.random.default_rng(0).standard_normal((3, 8))
    X, opt = np.stack([seq, seq]), np.array([1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(max_margin.InfeasibleSVMError) as info:
            norms.solve_w_svm_norm(X, opt, norm, name="my-contradictory-set")
    for part in ("my-contradictory-set", "n=2", "T=3", "d=8", f"{norm} norm", "tokens [1 2]"):
        assert part in str(info.value), (part, str(info.value))


def test_infeasible_u_svm_names_dataset():
    seq = np.random.default_rng(1).standard_normal((3, 7))
    X, y, opt = np.stack([seq, seq]), np.array([1.0, -1.0]), np.array([0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(max_margin.InfeasibleSVMError, match="opposite-labels.*n=2, d=7"):
            norms.solve_u_svm_norm(X, y, opt, "max", name="opposite-labels")


# ---- the dual solvers (svm.dual_solves) against the cvxpy reference --------------------

DUAL_SOLVED = ["fro", "l1.1", "l1.5", "l3", "l6"]


def _relative(A, B):
    return np.linalg.norm(A - B) / np.linalg.norm(B)


@pytest.mark.parametrize("norm", DUAL_SOLVED)
def test_dual_solved_w_svm_is_the_reference(instance, norm, caplog):
    """The same optimum as cvxpy's (strictly convex norms: one point): values to the
    reference's accuracy, matrices to its square root; no fallback was taken."""
    X, opt = instance["X"], instance["opt"]
    with caplog.at_level("WARNING", logger="attnbias.svm.norms"):
        s = norms.solve_w_svm_norm(X, opt, norm, name="tiny")
    assert not caplog.records, caplog.text
    ref = norms.solve_svm_norm_reference(X, opt, norm)
    assert norms.optimality_defect(s, X, opt, norm) is None
    assert s.optimality_residual < 1e-9  # far inside the check's 1e-6: not cvxpy's 1e-7
    assert s.value == pytest.approx(ref.value, rel=1e-7)
    assert _relative(s.solution, ref.solution) < 1e-4


@pytest.mark.parametrize("norm", [*DUAL_SOLVED, "spectral", "nuclear"])
def test_dual_solved_u_svm_is_the_reference(instance, norm, caplog):
    X, y, opt = instance["X"], instance["y"], instance["opt"]
    with caplog.at_level("WARNING", logger="attnbias.svm.norms"):
        s = norms.solve_u_svm_norm(X, y, opt, norm, name="tiny")
    assert not caplog.records, caplog.text
    ref = norms.solve_svm_norm_reference(X, opt, norm, y=y)
    assert norms.optimality_defect(s, X, opt, norm, y=y) is None
    assert s.value == pytest.approx(ref.value, rel=1e-7)
    assert _relative(s.solution, ref.solution) < 1e-4


def test_the_reference_comparison_tells_norms_apart(instance):
    """The control on the two tests above: l3's answer is not l1.5's reference."""
    X, opt = instance["X"], instance["opt"]
    s = norms.solve_w_svm_norm(X, opt, "l3")
    assert _relative(s.solution, norms.solve_svm_norm_reference(X, opt, "l1.5").solution) > 1e-2


def _moved(solve):
    """A solver whose answers are moved off the optimum (1e-3 of their size)."""

    def moved(*args, **kwargs):
        v, lam = solve(*args, **kwargs)
        noise = np.random.default_rng(0).standard_normal(v.shape)
        return v + 1e-3 * np.abs(v).max() * noise, lam

    return moved


def test_a_failed_certificate_falls_back_with_a_logged_line(instance, monkeypatch, caplog):
    """A dual answer that fails the KKT check is not used: the reference's is, with a line
    naming the dataset, the norm and the token set and saying why."""
    X, opt = instance["X"], instance["opt"]
    monkeypatch.setattr(norms.dual_solves, "lp_norm", _moved(norms.dual_solves.lp_norm))
    with caplog.at_level("WARNING", logger="attnbias.svm.norms"):
        s = norms.solve_w_svm_norm(X, opt, "l3", name="experiment toy, seed 7")
    assert norms.optimality_defect(s, X, opt, "l3") is None
    assert _relative(s.solution, norms.solve_svm_norm_reference(X, opt, "l3").solution) < 1e-4
    (line,) = [r.getMessage() for r in caplog.records]
    for part in ("experiment toy, seed 7", "l3 norm", "optimal tokens [", "fails its check"):
        assert part in line, (part, line)


def test_a_dual_out_of_budget_falls_back_with_a_logged_line(instance, monkeypatch, caplog):
    X, y, opt = instance["X"], instance["y"], instance["opt"]
    monkeypatch.setattr(norms.dual_solves, "NEWTON_ITERATIONS", 0)
    monkeypatch.setattr(norms.dual_solves, "LBFGS_ITERATIONS", 1)
    with caplog.at_level("WARNING", logger="attnbias.svm.norms"):
        s = norms.solve_u_svm_norm(X, y, opt, "l3", name="experiment toy, seed 8")
    assert norms.optimality_defect(s, X, opt, "l3", y=y) is None
    (line,) = [r.getMessage() for r in caplog.records]
    assert "u-SVM in the l3 norm for experiment toy, seed 8" in line
    assert "the dual solver failed" in line


def test_an_answer_no_solver_certifies_is_refused(instance, monkeypatch):
    """The dual's and the reference's answers both moved: refused, naming what was solved."""
    X, opt = instance["X"], instance["opt"]
    monkeypatch.setattr(norms.dual_solves, "lp_norm", _moved(norms.dual_solves.lp_norm))
    solve = norms._solve

    def moved_reference(*args):
        V, dual, status = solve(*args)
        return V * (1 + 1e-3 * np.random.default_rng(1).standard_normal(V.shape)), dual, status

    monkeypatch.setattr(norms, "_solve", moved_reference)
    with pytest.raises(norms.CertificateError, match=r"experiment toy, seed 9, optimal tokens"):
        norms.solve_w_svm_norm(X, opt, "l3", name="experiment toy, seed 9")


@pytest.mark.parametrize("norm", ["fro", "max", "spectral", "l3"])
def test_a_degenerate_token_set_is_refused(instance, norm):
    """A token equal to its sequence's optimal one gives a zero constraint row (no margin
    reaches 1): refused naming the dataset, norm, token set and row. The control: moved by
    1e-3 the same data solves."""
    X, opt = instance["X"].copy(), instance["opt"]
    other = (opt[0] + 1) % X.shape[1]
    X[0, other] = X[0, opt[0]]
    with pytest.raises(max_margin.InfeasibleSVMError) as info:
        norms.solve_w_svm_norm(X, opt, norm, name="experiment toy, seed 4")
    for part in ("experiment toy, seed 4", f"{norm} norm", "optimal tokens [", "degenerate",
                 "sample 0"):  # fmt: skip
        assert part in str(info.value), (part, str(info.value))
    X[0, other] += 1e-3 * np.random.default_rng(0).standard_normal(X.shape[2])
    assert norms.solve_w_svm_norm(X, opt, norm).value > 0


def test_a_zero_optimal_token_is_refused_for_u(instance):
    X, y, opt = instance["X"].copy(), instance["y"], instance["opt"]
    X[2, opt[2]] = 0.0
    with pytest.raises(max_margin.InfeasibleSVMError, match="degenerate.*sample 2"):
        norms.solve_u_svm_norm(X, y, opt, "l3", name="experiment toy, seed 5")


# ------------------------------------------------ cross-attention: the queries Z (model.queries)

# test_max_margin's hand case: one constraint <A, W> >= 1 with A = (1, -1) (0, 2)^T, whose
# two non-zero entries have one magnitude, so the least-norm W is sign(A) / 4 on them in every
# norm (l_p: sign(A)|A|^(q-1) / ||A||_q^q; spectral and nuclear: A is rank one, W = A /
# ||A||_F^2; max: the face's least-Frobenius point, svm.canonical), and (1, -1) e_1^T / 2
# without the queries.
HAND = dict(X=np.array([[[1.0, 0.0], [0.0, 1.0]]]), opt=np.array([0]), Z=np.array([[0.0, 2.0]]))
HAND_W_CROSS = np.array([[0.0, 0.25], [0.0, -0.25]])
HAND_W_SELF = np.array([[0.5, 0.0], [-0.5, 0.0]])
EVERY_NORM = ["fro", "max", "spectral", "nuclear", "l3", "l1.5"]


@pytest.mark.parametrize("norm", EVERY_NORM)
def test_the_w_svm_with_queries_is_the_hand_computed_one_in_every_norm(norm):
    data = {**HAND, "y": np.ones(1)}
    got = solve_for_dataset(data, [norm], False, "hand")[f"W_{norm}"]
    np.testing.assert_allclose(got.solution, HAND_W_CROSS, atol=1e-6)
    assert norms.optimality_defect(got, HAND["X"], HAND["opt"], norm, queries=HAND["Z"]) is None
    # the control: its KKT conditions fail for self-attention's constraints, whose own
    # solution is the other hand-computed W
    assert norms.optimality_defect(got, HAND["X"], HAND["opt"], norm) is not None
    plain = solve_for_dataset({**data, "Z": HAND["X"][:, 0]}, [norm], False, "hand")
    np.testing.assert_allclose(plain[f"W_{norm}"].solution, HAND_W_SELF, atol=1e-6)


@pytest.mark.parametrize("norm", ["fro", "max", "l3"])
def test_every_norm_reads_the_queries_of_a_cross_attention_dataset(norm):
    """On a larger instance: the solution meets every margin (x_opt - x_t)^T W z_i >= 1,
    with equality somewhere, and is not the self-attention solution of the same tokens."""
    data = cross_instance(0, dict(n=4, T=3, d=6))
    W = solve_for_dataset(data, [norm], False, "cross")[f"W_{norm}"].solution
    scores = np.einsum("ntd,de,ne->nt", data["X"], W, data["Z"])
    keep = np.arange(3)[None, :] != data["opt"][:, None]
    margins = (scores[np.arange(4), data["opt"]][:, None] - scores)[keep]
    assert margins.min() == pytest.approx(1.0, abs=1e-6)
    W_self = solve_for_dataset(without_queries(data), [norm], False, "self")[f"W_{norm}"]
    assert np.linalg.norm(W - W_self.solution) > 1e-2 * np.linalg.norm(W)


# ---- the check on a solve's rows; the u-SVM in l2 at the benchmark's size ---------------


@pytest.fixture(scope="module")
def fig2_sized():
    """fig2's size (Example 1, n=20, T=5, d=100): the u-SVM of the benchmark."""
    return models.generate("example1", 1, dict(n=20, T=5, d=100))


@pytest.mark.parametrize("what", ["u", "W"])
def test_the_check_on_the_solves_rows_is_the_check_on_the_data(instance, what):
    """kkt_violations and optimality_defect given constraint_rows answer exactly as when
    they compute the rows themselves, for a right and for a wrong dual; the control: rows of
    other data change the verdict (they are read, not ignored)."""
    X, y, opt = instance["X"], instance["y"], instance["opt"]
    u = what == "u"
    s = (
        norms.solve_u_svm_norm(X, y, opt, "spectral")
        if u
        else norms.solve_w_svm_norm(X, opt, "spectral")
    )
    rows = norms.constraint_rows(X, opt, y=y, vector=u)
    wrong = norms.NormSVMSolution(s.solution, s.dual * 1.01, s.margins, s.value, 0.0)
    for candidate in (s, wrong):
        W, dual = candidate.solution, candidate.dual
        given = norms.kkt_violations(W, dual, X, opt, "spectral", y, rows=rows)
        assert given == norms.kkt_violations(W, dual, X, opt, "spectral", y)
        assert norms.optimality_defect(candidate, X, opt, "spectral", y=y, rows=rows) == (
            norms.optimality_defect(candidate, X, opt, "spectral", y=y)
        )
    assert norms.optimality_defect(s, X, opt, "spectral", y=y, rows=rows) is None
    assert "not optimal" in norms.optimality_defect(wrong, X, opt, "spectral", y=y, rows=rows)
    other = models.example1(np.random.default_rng(4), n=6, T=3, d=5)
    elsewhere = norms.constraint_rows(other["X"], other["opt"], y=other["y"], vector=u)
    assert norms.optimality_defect(s, X, opt, "spectral", y=y, rows=elsewhere)


@pytest.mark.parametrize("norm", ["fro", "spectral", "nuclear"])
def test_the_l2_u_svm_at_fig2s_size_is_the_reference(fig2_sized, norm):
    """The benchmark's u-SVM: cvxpy's answer, max_margin's W_mm-style solve's (the same
    Gram dual), and one answer for fro, spectral and nuclear (l2 on a vector, bit for bit)."""
    X, y, opt = fig2_sized["X"], fig2_sized["y"], fig2_sized["opt"]
    s = norms.solve_u_svm_norm(X, y, opt, norm)
    assert norms.optimality_defect(s, X, opt, norm, y=y) is None
    assert s.optimality_residual < 1e-12
    ref = norms.solve_svm_norm_reference(X, opt, norm, y=y)
    assert s.value == pytest.approx(ref.value, rel=1e-8)
    assert _relative(s.solution, ref.solution) < 1e-4
    assert _relative(s.dual, ref.dual) < 1e-4
    plain = max_margin.solve_u_svm(X, y, opt)
    assert _relative(s.solution, plain.u) < 1e-12
    fro = norms.solve_u_svm_norm(X, y, opt, "fro")
    assert np.array_equal(s.solution, fro.solution) and np.array_equal(s.dual, fro.dual)


def test_a_wrong_u_dual_fails_the_check_and_falls_back(fig2_sized, monkeypatch, caplog):
    """The control on the test above: the Gram dual's duals moved (1e-2 of their size; the
    check sees a dual's direction to second order: <G, u> = ||G|| ||u|| cos) fail the KKT
    check as before; the reference's answer is used, with a logged line."""
    X, y, opt = fig2_sized["X"], fig2_sized["y"], fig2_sized["opt"]
    solve = norms.dual_solves.frobenius

    def moved(*args, **kwargs):
        v, lam = solve(*args, **kwargs)
        return v, lam * (1 + 1e-2 * np.random.default_rng(0).standard_normal(lam.shape))

    monkeypatch.setattr(norms.dual_solves, "frobenius", moved)
    with caplog.at_level("WARNING", logger="attnbias.svm.norms"):
        s = norms.solve_u_svm_norm(X, y, opt, "spectral", name="experiment fig2, seed 1")
    (line,) = [r.getMessage() for r in caplog.records]
    for part in ("u-SVM in the spectral norm for experiment fig2, seed 1", "fails its check"):
        assert part in line, (part, line)
    assert norms.optimality_defect(s, X, opt, "spectral", y=y) is None
