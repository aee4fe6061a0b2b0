"""Mirror descent with psi(W) = ||W||_p^p / p (entrywise): the dual variable
Z = grad psi(W) = sign(W) |W|^(p-1) takes the gradient step, Z <- Z - lr G, and
W = sign(Z) |Z|^(1/(p-1)). Z starts at grad psi(W0) and is kept per run (u likewise)."""

from __future__ import annotations

import math

import numpy as np

from attnbias.optim import directions
from attnbias.optim.directions import per_run
from attnbias.optim.lp_norm import check_p, lp_name
from attnbias.optim.rule import Look, Rule, Update


def _signed_power(Z: np.ndarray, power: float) -> np.ndarray:
    """sign(Z) |Z|^power (copysign: one pass fewer than a product with sign(Z))."""
    magnitude = np.abs(Z) ** power
    return np.copysign(magnitude, Z, out=magnitude)


class Mirror(Update):
    def __init__(self, spec, params, seeds):
        super().__init__(spec, params, seeds)
        self.state = {name: _signed_power(value, spec.p - 1) for name, value in params.items()}

    def step(self, t, params, grads):
        for name, g in grads.items():
            coef = directions.coefficient(math.log(self.spec.lr_of(name)) + g.log_scale)
            self.state[name] -= per_run(coef, g.direction) * g.direction
            params[name][...] = _signed_power(self.state[name], 1 / (self.spec.p - 1))


def check(spec) -> None:
    # p > 1 for the potential; within lp_norm's range so that its l_p norm has a name
    check_p(spec.p, "mirror descent (psi = ||W||_p^p / p)")


RULE = Rule(
    name="mirror",
    settings=("lr", "lr_u", "p"),
    caption=lambda s: f"l_{s.p:g} mirror descent lr={s.lr:g}",
    update=Mirror,
    check=check,
    implicit_norm=lambda s: lp_name(s.p),
    names={"mirror": "l_p mirror descent"},
    # the l_p family, with nsd's l_p member: both are expected to find the l_p margin
    looks={"mirror": Look("lp", "p", "long-dash")},
)
