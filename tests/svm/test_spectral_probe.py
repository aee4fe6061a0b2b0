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

from attnbias.svm import spectral_nuclear, spectral_probe, uniqueness
from attnbias.svm.dual_solves import DualSolveError
from attnbias.svm.norms import w_rows

pytest.importorskip("cvxpy")

OPT = np.array([0, 0])
SLAB = 3e-3  # the slab's width off the face, ~ sqrt(svm.uniqueness.FACE_TOLERANCE)


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
