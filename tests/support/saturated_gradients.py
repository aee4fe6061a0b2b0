"""Attention saturated on a token that is not the optimal one, and the check of a gradient
or a step against the extended-precision oracle there (gradient_oracle), for the gradient
tests (tests/model/test_gradients.py) and the rules' first steps on every backend
(tests/optim/test_rules.py)."""

from __future__ import annotations

import gradient_oracle
import numpy as np

REL = 1e-10  # relative error allowed, in the Frobenius norm


SIGN_FLOOR = 1e-12  # entries above this fraction of the norm must carry the oracle's sign


def saturated(gap: float, seed: int = 0, n: int = 3, T: int = 4, d: int = 5) -> dict:
    """A dataset (data file contract) whose attention at W0 sits on a non-optimal token of
    every sequence, `gap` ahead of the next logit."""
    rng = np.random.default_rng(seed)
    X = 2.0 * rng.standard_normal((n, T, d))
    y = rng.choice([-1.0, 1.0], size=n)
    u = 0.5 * rng.standard_normal(d)
    gamma = y[:, None] * (X @ u)
    opt = np.argmax(gamma, axis=1)
    top = (opt + 1 + rng.integers(0, T - 1, size=n)) % T  # never opt
    logits = -rng.uniform(0.0, 3.0, size=(n, T))
    # `gap` over the best of the rest
    logits[np.arange(n), top] = gap + np.max(np.where(np.eye(T)[top] > 0, -np.inf, logits), 1)
    # x_it^T W x_i1 = <vec W, x_it (x) x_i1>: the least-norm W with these logits
    rows = np.einsum("ntj,nk->ntjk", X, X[:, 0]).reshape(n * T, d * d)
    W0 = np.linalg.lstsq(rows, logits.reshape(-1), rcond=None)[0].reshape(d, d)
    reached = np.einsum("ntj,jk,nk->nt", X, W0, X[:, 0])
    assert np.all(np.argmax(reached, axis=1) == top)
    assert np.all(np.argmax(reached, axis=1) != opt)
    second = np.sort(reached, axis=1)[:, -2]
    np.testing.assert_allclose(reached.max(axis=1) - second, gap, rtol=1e-9)
    return dict(X=X, y=y, u=u, opt=opt, W0=W0)


def oracle(ds: dict, loss: str, gap: float, W=None, u=None) -> gradient_oracle.OracleGradient:
    W = ds["W0"] if W is None else W
    u = ds["u"] if u is None else u
    return gradient_oracle.gradients(
        ds["X"], ds["y"], u, W, loss, dps=gradient_oracle.digits_for(gap)
    )


def assert_matches(got: np.ndarray, want_unit: np.ndarray, what: str) -> None:
    """`got` points along the unit `want_unit` to REL, and every entry of want above
    SIGN_FLOOR carries its sign."""
    norm = np.linalg.norm(got)
    assert norm > 0, f"{what}: zero"
    error = np.linalg.norm(got / norm - want_unit)
    assert error <= REL, f"{what}: relative error {error:.3g}"
    big = np.abs(want_unit) > SIGN_FLOOR
    wrong = np.sign(got[big]) != np.sign(want_unit[big])
    assert not wrong.any(), f"{what}: {wrong.sum()} of {big.sum()} signs wrong"
