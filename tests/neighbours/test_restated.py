"""AttentionMD's step restated (attnbias.neighbours.restated): a normalised l_2 step moves W
by lr while the gradient is far above their 2.2e-16, and by less once it is not."""

from __future__ import annotations

import numpy as np

from attnbias.data import models
from attnbias.neighbours import restated


def test_a_normalised_l2_step_has_length_lr_until_the_denominator_matters():
    data = models.generate("cross_gaussian", 1, {"n": 3, "T": 4, "d": 5, "init": "normal"})
    Ws, _, _ = restated.their_mirror(data, 2.0, 0.1, 3)
    np.testing.assert_allclose(np.linalg.norm(np.diff(Ws, axis=0), axis=(1, 2)), 0.1, rtol=1e-12)
    # the control: an eps the size of the gradient halves the step at least
    small, _, _ = restated.their_mirror(data, 2.0, 0.1, 1, eps=1e3)
    assert np.linalg.norm(small[1] - small[0]) < 0.05
