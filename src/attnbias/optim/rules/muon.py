"""Muon: M <- beta M + G, W <- W - lr_t U V^T(M) (beta 0: spectral descent); on u, M / ||M||.
U V^T over M's singular values above polar_cutoff times the largest (directions' doc).
M is kept as e^a M~ (directions.accumulate: it mixes gradients of different scales), for W
in the left coordinates of M = L Q (directions.QueryBasis)."""

from __future__ import annotations

import math

from attnbias.optim import directions
from attnbias.optim.rule import Look, Rule, Update


class Muon(Update):
    def step(self, t, params, grads):
        log_beta = math.log(self.spec.beta) if self.spec.beta > 0 else -math.inf
        for name, g in grads.items():
            current = g.direction if g.left is None else g.left
            self.state[name] = directions.accumulate(
                self.state.get(name), log_beta, g.log_scale, current
            )
            M = self.state[name][1]
            step = directions.step_size(self.spec, name, t)
            cutoff = self.spec.polar_cutoff
            params[name] -= step * directions.steepest("spectral", None, g, M, cutoff)


def check(spec) -> None:
    directions.check_schedule(spec)
    directions.check_polar_cutoff(spec)
    if not 0.0 <= spec.beta < 1.0:
        raise ValueError(f"beta must lie in [0, 1), got {spec.beta}")


RULE = Rule(
    name="muon",
    settings=("lr", "lr_u", "schedule", "beta", "polar_cutoff"),
    caption=lambda s: directions.with_polar_cutoff(
        directions.with_schedule(f"Muon beta={s.beta:g} lr={s.lr:g}", s), s
    ),
    update=Muon,
    check=check,
    implicit_norm=lambda s: "spectral",
    algorithm=lambda spec, layout: "muon" if spec.beta else "spectral",
    examples=({}, {"beta": 0.0}),
    names={"spectral": "spectral descent (Muon without momentum)", "muon": "Muon"},
    looks={
        "spectral": Look("spectral", "h"),
        "muon": Look("spectral", "d", "long-dash"),
    },
)
