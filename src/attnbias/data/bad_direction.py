"""Example-1 data started in a bad stationary direction (App. C.1's random variant, fig8_random).

Apart from attnbias.data.models because it solves an SVM: only the experiments of this model
depend on max_margin.py, so an edit there reruns their data jobs and no other's.
"""

from __future__ import annotations

import numpy as np

from attnbias.data.models import example1
from attnbias.svm import max_margin


def bad_direction(
    rng: np.random.Generator, *, init_norm: float, **example1_params
) -> dict[str, np.ndarray]:
    """Example-1 data started in a "bad" stationary direction (App. C.1, Fig. 8).

    W_bad is the max-margin direction that selects, in every sequence, the non-optimal
    token with the lowest score instead of the optimal one. Along R * W_bad, R -> inf, the
    softmax saturates on those tokens and the gradient vanishes. W0 = init_norm * W_bad / ||W_bad||.
    """
    data = example1(rng, **example1_params)
    gamma = data["y"][:, None] * (data["X"] @ data["u"])
    masked = np.where(np.arange(gamma.shape[1]) == data["opt"][:, None], np.inf, gamma)
    bad_tokens = np.argmin(masked, axis=1)
    W_bad = max_margin.solve_w_svm(data["X"], bad_tokens, name="bad direction (fig8)").W
    data["W0"] = init_norm * W_bad / np.linalg.norm(W_bad)
    data["bad"] = bad_tokens
    return data
