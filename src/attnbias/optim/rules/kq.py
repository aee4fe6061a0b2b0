"""GD on K and Q (d x d each), W = W0 + K Q^T; u (when trained) by GD.

Start: K0, Q0 drawn from numpy's default_rng of the run's seed (training.full_matrix:
rule.run_seed of its X and W0), so W starts at W0 + K0 Q0^T, near W0 (example 1 has
W0 = 0, where GD on K, Q would never move): i.i.d. N(0, init_scale^2) entries (init
"normal"), or nn.Linear's default draw, U(-1/sqrt(d), 1/sqrt(d)) (init "linear", TF-as-SVM's
start, which their code draws unseeded).
With G = grad_W L: grad_K = G Q, grad_Q = G^T K, each plus 2 ridge K (2 ridge Q) for the
loss plus ridge (||K||_F^2 + ||Q||_F^2) (TF-as-SVM's eps = 2.2e-16).

Normalised (TF-as-SVM's (K, Q) runs, `dual_normalize` per_block): each factor's gradient
divided by its own Frobenius norm (u's by its own); global: one norm over all of them. The
norm is formed in logs (directions.log_coefficients): theirs adds 2.2e-16 to it."""

from __future__ import annotations

import math

import numpy as np

from attnbias.optim import directions
from attnbias.optim.directions import per_run
from attnbias.optim.rule import Look, Rule, Update

INITS = ("normal", "linear")


def initial_factors(spec, d: int, seeds: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """K0, Q0 (B, d, d) of each run's seed: see the module doc."""
    if spec.init == "linear":
        bound = 1.0 / math.sqrt(d)
        draws = [np.random.default_rng(s).uniform(-bound, bound, (2, d, d)) for s in seeds]
        factors = np.stack(draws)
    else:
        draws = [np.random.default_rng(seed).standard_normal((2, d, d)) for seed in seeds]
        factors = spec.init_scale * np.stack(draws)
    return factors[:, 0], factors[:, 1]


class KeyQuery(Update):
    def __init__(self, spec, params, seeds):
        super().__init__(spec, params, seeds)
        self.K, self.Q = initial_factors(spec, params["W"].shape[-1], seeds)
        self.W0 = params["W"].copy()
        params["W"] += self.K @ np.swapaxes(self.Q, 1, 2)

    def step(self, t, params, grads):
        if self.spec.dual_normalize == "none":
            self._plain_step(params, grads)
        else:
            self._normalised_step(params, grads)

    def _move(self, params, dK, dQ) -> None:
        self.K, self.Q = self.K - dK, self.Q - dQ
        params["W"][...] = self.W0 + self.K @ np.swapaxes(self.Q, 1, 2)

    def _plain_step(self, params, grads) -> None:
        """lr e^s G~ (times Q, K), in the order of products GD on K, Q has always taken
        (the default build's kq runs are unchanged bitwise), plus the ridge's 2 lr ridge K."""
        for name, g in grads.items():
            log_coef = math.log(self.spec.lr_of(name)) + g.log_scale
            coef = per_run(directions.coefficient(log_coef), g.direction)
            if name == "u":
                params["u"] -= coef * g.direction
                continue
            G = coef * g.direction
            dK, dQ = G @ self.Q, np.swapaxes(G, 1, 2) @ self.K
            if self.spec.ridge > 0:
                shrink = 2 * self.spec.ridge * self.spec.lr_of("W")
                dK, dQ = dK + shrink * self.K, dQ + shrink * self.Q
            self._move(params, dK, dQ)

    def _factor_gradient(self, g, left: np.ndarray, factor: np.ndarray) -> tuple:
        """e^s left (+ 2 ridge factor) as (log scale, array): directions.accumulate keeps
        both terms at their own scales, so neither underflows where it matters."""
        found = directions.accumulate(None, 0.0, g.log_scale, left)
        if self.spec.ridge > 0:
            log_ridge = np.full(len(factor), math.log(2 * self.spec.ridge))
            found = directions.accumulate(found, 0.0, log_ridge, factor)
        return found

    def _normalised_step(self, params, grads) -> None:
        blocks, lrs = {}, {}
        for name, g in grads.items():
            if name == "u":
                blocks["u"], lrs["u"] = (g.log_scale, g.direction), self.spec.lr_of("u")
                continue
            G = g.direction
            blocks["K"] = self._factor_gradient(g, G @ self.Q, self.K)
            blocks["Q"] = self._factor_gradient(g, np.swapaxes(G, 1, 2) @ self.K, self.Q)
            lrs["K"] = lrs["Q"] = self.spec.lr_of("W")
        log_coefs = directions.log_coefficients(self.spec, lrs, blocks, 2.0)
        steps = {
            name: per_run(directions.coefficient(log_coefs[name]), D) * D
            for name, (_, D) in blocks.items()
        }
        if "u" in steps:
            params["u"] -= steps["u"]
        if "K" in steps:
            self._move(params, steps["K"], steps["Q"])


def check(spec) -> None:
    if not spec.init_scale > 0:
        raise ValueError(f"init_scale must be > 0, got {spec.init_scale}")
    if spec.init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {spec.init!r}")
    if spec.init == "linear" and spec.init_scale != 0.01:
        raise ValueError("init_scale is the scale of init 'normal'; remove it with init 'linear'")
    if not (spec.ridge >= 0 and math.isfinite(spec.ridge)):
        raise ValueError(f"ridge must be a finite number >= 0, got {spec.ridge}")
    directions.check_dual_normalize(spec)


def caption(spec) -> str:
    start = "nn.Linear's" if spec.init == "linear" else f"{spec.init_scale:g}"
    text = f"GD on K, Q (W = K Q^T) lr={spec.lr:g} init={start}"
    if spec.ridge:
        text += f" ridge={spec.ridge:g}"
    return directions.with_dual_normalize(text, spec, "F")


RULE = Rule(
    name="kq",
    settings=("lr", "lr_u", "init_scale", "init", "ridge", "dual_normalize"),
    caption=caption,
    update=KeyQuery,
    check=check,
    implicit_norm=lambda s: "nuclear",
    algorithm=lambda spec, layout: "kq" if spec.dual_normalize == "none" else "nkq",
    examples=({}, {"dual_normalize": "per_block"}),
    names={
        "kq": "GD on K and Q (W = K Q^T)",
        "nkq": "normalised GD on K and Q, each factor by its own norm (TF-as-SVM's)",
    },
    # gradient descent, on K and Q
    looks={"kq": Look("gd", "8", "long-dash"), "nkq": Look("gd", "8", "dash-dot-dot")},
)
