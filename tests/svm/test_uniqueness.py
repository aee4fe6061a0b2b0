"""attnbias.svm.uniqueness: the face probe reads the queries Z of cross-attention."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnbias.svm.uniqueness import face_cosine

pytest.importorskip("cvxpy")

# tests/svm/test_norms.py's hand case: one constraint 2 W_12 - 2 W_22 >= 1 (the query
# z = (0, 2)), whose max-norm optimum 1/4 fixes W_12 = 1/4, W_22 = -1/4 and leaves W_11 and
# W_21 free in [-1/4, 1/4]. Every element of that face has <W, W*> = <W*, W*> with
# W* = [[0, 1/4], [0, -1/4]], so the probe's least inner product is W*'s own and the cosine
# it returns lies between 1/sqrt(2) (a first column of +-1/4) and 1.
X = np.array([[[1.0, 0.0], [0.0, 1.0]]])
OPT = np.array([0])
Z = np.array([[0.0, 2.0]])
W_STAR = np.array([[0.0, 0.25], [0.0, -0.25]])


def test_the_max_norm_face_of_a_cross_attention_svm_is_probed_with_its_queries():
    cosine = face_cosine(X, OPT, "max", W_STAR, Z)
    assert 1 / math.sqrt(2) - 1e-6 <= cosine <= 1 + 1e-9
    # the control: read as self-attention (query x_1 = e_1) no W of max norm 1/4 meets the
    # constraint W_11 - W_21 >= 1, and the probe finds nothing
    assert math.isnan(face_cosine(X, OPT, "max", W_STAR))
