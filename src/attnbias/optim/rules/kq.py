"""GD on K and Q (d x d each), W = W0 + K Q^T; u (when trained) by GD.

Start: K0, Q0 with i.i.d. N(0, init_scale^2) entries drawn from numpy's default_rng of the
run's seed (training.full_matrix: rule.run_seed of its X and W0), so W starts at
W0 + K0 Q0^T, near W0 (example 1 has W0 = 0, where GD on K, Q would never move).
With G = grad_W L: grad_K = G Q, grad_Q = G^T K."""

from __future__ import annotations

import math

import numpy as np

from attnbias.optim import directions
from attnbias.optim.directions import per_run
from attnbias.optim.rule import Look, Rule, Update


class KeyQuery(Update):
    def __init__(self, spec, params, seeds):
        super().__init__(spec, params, seeds)
        d = params["W"].shape[-1]
        draws = [np.random.default_rng(seed).standard_normal((2, d, d)) for seed in seeds]
        factors = spec.init_scale * np.stack(draws)
        self.K, self.Q = factors[:, 0], factors[:, 1]
        self.W0 = params["W"].copy()
        params["W"] += self.K @ np.swapaxes(self.Q, 1, 2)

    def step(self, t, params, grads):
        for name, g in grads.items():
            log_coef = math.log(self.spec.lr_of(name)) + g.log_scale
            coef = per_run(directions.coefficient(log_coef), g.direction)
            if name == "u":
                params["u"] -= coef * g.direction
                continue
            G = coef * g.direction
            self.K, self.Q = self.K - G @ self.Q, self.Q - np.swapaxes(G, 1, 2) @ self.K
            params["W"][...] = self.W0 + self.K @ np.swapaxes(self.Q, 1, 2)


def check(spec) -> None:
    if not spec.init_scale > 0:
        raise ValueError(f"init_scale must be > 0, got {spec.init_scale}")


RULE = Rule(
    name="kq",
    settings=("lr", "lr_u", "init_scale"),
    caption=lambda s: f"GD on K, Q (W = K Q^T) lr={s.lr:g} init={s.init_scale:g}",
    update=KeyQuery,
    check=check,
    implicit_norm=lambda s: "nuclear",
    names={"kq": "GD on K and Q (W = K Q^T)"},
    looks={"kq": Look("gd", "8", "long-dash")},  # gradient descent, on K and Q
)
