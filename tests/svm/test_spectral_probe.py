"""attnbias.svm.spectral_probe: the spectral SVM's exact optimal face, against cvxpy's slab
probe (svm.uniqueness, fast=False) on hand instances whose faces are known.

Two constraints through queries (cross-attention: b_k = z_k), d = 2:
  POINT  W_11 >= 1, W_22 >= 1: the optimum, of spectral norm 1, is I alone (G = diag of
         the duals, of full rank);
  FACE   W_11 >= 1, sum(W) >= 1: every diag(1, w), w in [0, 1], is optimal (G = lambda_1
         e1 e1^T of rank 1, the second constraint inactive), and the optimum least aligned
         with W* = I is diag(1, 0), cosine 1 / sqrt(2). cvxpy's slab, ||W||_2 <= (1 +
         1e-6), holds points sqrt(1e-6) off that face: its cosine reads 0.7057 (SLAB).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from attnbias.data import models
from attnbias.svm import geometry, spectral_nuclear, spectral_probe, uniqueness
from attnbias.svm.dual_solves import DualSolveError
from attnbias.svm.norms import w_rows

pytest.importorskip("cvxpy")

OPT = np.array([0, 0])
SLAB = 3e-3  # the slab's width off the face, ~ sqrt(svm.uniqueness.FACE_TOLERANCE)
# geometry_example1's data (config/config.yaml): seeds 2 to 4 are points, 1 and 5 faces
EXAMPLE1 = dict(n=20, T=5, d=100, opt_signal=1.0, query_signal=0.0, noise_orthogonal_to_u=True)


def _instance(second: list[float]):
    """X, Z with the constraints a_1 = e1, z_1 = e1 and a_2 = z_2 = `second`."""
    X = np.zeros((2, 2, 2))
    X[0, 0], X[1, 0] = [1.0, 0.0], second
    return X, np.array([[1.0, 0.0], second])


POINT, FACE = _instance([0.0, 1.0]), _instance([1.0, 1.0])
W_STAR = np.eye(2)


def _rows(instance):
    X, Z = instance
    return w_rows(X, OPT, Z)


def _cvxpy(instance) -> float:
    X, Z = instance
    return uniqueness.face_cosine(X, OPT, "spectral", W_STAR, Z, fast=False)


def test_the_face_is_a_point_where_cvxpy_finds_the_optimum_unique():
    assert spectral_probe.face_is_a_point(*_rows(POINT))
    assert _cvxpy(POINT) == pytest.approx(1.0, abs=1e-6)
    X, Z = POINT
    assert uniqueness.face_cosine(X, OPT, "spectral", W_STAR, Z) == 1.0  # no solve
    assert not spectral_probe.face_is_a_point(*_rows(FACE))
    assert _cvxpy(FACE) == pytest.approx(1 / math.sqrt(2), abs=SLAB)


def test_a_perturbed_g_reads_a_face_as_a_point_which_cvxpy_refutes(monkeypatch):
    """The control: the inactive constraint's dual raised to the active one's makes G of
    full rank, and the probe would call FACE's optimum unique."""
    solve = spectral_nuclear.solve

    def perturbed(a, b, kind):
        W, lam = solve(a, b, kind)
        return W, np.full_like(lam, lam.max())

    monkeypatch.setattr(spectral_nuclear, "solve", perturbed)
    assert spectral_probe.face_is_a_point(*_rows(FACE))
    assert _cvxpy(FACE) < 0.99  # cvxpy: not unique


def test_the_least_aligned_point_on_the_exact_face_is_cvxpy_s():
    a, b = _rows(FACE)
    bound = (1 + uniqueness.FACE_TOLERANCE) * 1.0
    W = spectral_probe.least_aligned_point(a, b, W_STAR)
    assert np.allclose(W, np.diag([1.0, 0.0]), atol=1e-5)
    cosine = spectral_probe.face_cosine(a, b, W_STAR, bound)
    assert cosine == pytest.approx(1 / math.sqrt(2), abs=1e-5)
    assert cosine == pytest.approx(_cvxpy(FACE), abs=SLAB)
    assert spectral_probe.least_aligned_point(*_rows(POINT), W_STAR) is None
    # the control: a bound below the optimum, which no point of the face meets
    with pytest.raises(DualSolveError, match="outside the bound"):
        spectral_probe.face_cosine(a, b, W_STAR, 1.0 - 1e-3)


def test_an_unclear_active_set_falls_back_to_cvxpy_with_a_line_naming_the_svm(monkeypatch, caplog):
    solve = spectral_nuclear.solve

    def unclear(a, b, kind):  # a dual at the active set's cut
        W, lam = solve(a, b, kind)
        return W, np.where(lam < lam.max(), lam.max() * spectral_probe.ACTIVE_CUT, lam)

    monkeypatch.setattr(spectral_nuclear, "solve", unclear)
    with pytest.raises(DualSolveError, match="not clear-cut"):
        spectral_probe.face_is_a_point(*_rows(FACE))
    X, Z = FACE
    with caplog.at_level(logging.WARNING, logger="attnbias.svm.uniqueness"):
        cosine = uniqueness.face_cosine(X, OPT, "spectral", W_STAR, Z, name="experiment e, seed 3")
    assert cosine == pytest.approx(_cvxpy(FACE), abs=1e-9)
    (line,) = [r.getMessage() for r in caplog.records]
    assert "experiment e, seed 3" in line and "spectral" in line
    assert "optimal tokens [0 0]" in line and "not clear-cut" in line
    assert "spectral-norm face probe by svm.spectral_probe" in line


@pytest.fixture(scope="module")
def example1():
    """{seed: (data, its spectral W-SVM as the svm_geometry job solves it)}, seeds 1 to 5."""
    found = {}
    for seed in range(1, 6):
        data = models.generate("example1", seed, EXAMPLE1)
        found[seed] = data, geometry.solve_w(data, "spectral", f"seed {seed}")
    return found


@pytest.fixture
def svm_solves(monkeypatch):
    """How many times the spectral SVM is solved (the probe's own solve for its duals)."""
    calls = []
    solve = spectral_nuclear.solve

    def counted(a, b, kind):
        calls.append(kind)
        return solve(a, b, kind)

    monkeypatch.setattr(spectral_nuclear, "solve", counted)
    return calls


def test_the_duals_the_svm_found_give_the_answer_of_the_probe_that_solves(example1, svm_solves):
    """On Example 1's seeds (points and faces both met), face_is_a_point from the duals the
    SVM's solve found equals face_is_a_point solving the SVM again for its own."""
    answers = {}
    for seed, (data, found) in example1.items():
        a, b = w_rows(data["X"], data["opt"])
        answers[seed] = spectral_probe.face_is_a_point(a, b, found.dual)
        assert not svm_solves  # the duals passed: nothing solved
        assert answers[seed] == spectral_probe.face_is_a_point(a, b)
        assert svm_solves.pop() == "spectral"  # the control: this one solves
    assert answers == {1: False, 2: True, 3: True, 4: True, 5: False}


def test_uniqueness_reads_the_passed_duals_and_refuses_wrong_ones(example1, svm_solves, caplog):
    """svm.uniqueness hands the SVM's duals to the probe (no solve); a dual vector that fails
    the KKT check with W* is refused with a logged line and not used: the probe solves for
    its own and answers as without it."""
    data, found = example1[2]
    X, opt, W = data["X"], data["opt"], found.solution
    assert uniqueness.face_cosine(X, opt, "spectral", W, dual=found.dual) == 1.0
    assert not svm_solves
    # one active constraint: a G of rank 1, which would call this point a face
    wrong = np.where(np.arange(len(found.dual)) == np.argmax(found.dual), found.dual.max(), 0.0)
    a, b = w_rows(X, opt)
    assert not spectral_probe.face_is_a_point(a, b, wrong)  # used, it would mislead
    svm_solves.clear()
    with caplog.at_level(logging.WARNING, logger="attnbias.svm.uniqueness"):
        cosine = uniqueness.face_cosine(X, opt, "spectral", W, dual=wrong, name="seed 2")
    assert cosine == 1.0 and svm_solves == ["spectral"]  # solved for its own
    (line,) = [r.getMessage() for r in caplog.records]
    assert "seed 2" in line and "refused" in line and "not optimal" in line
    with pytest.raises(ValueError, match=r"\(3,\) duals for 80 constraints"):
        spectral_probe.face_is_a_point(a, b, found.dual[:3])
