"""Sign descent: W <- W - lr_t sign(G) (u likewise), steepest descent in the max norm."""

from __future__ import annotations

import numpy as np

from attnbias.optim import directions
from attnbias.optim.rule import Look, Rule, Update


class Sign(Update):
    def step(self, t, params, grads):
        for name, g in grads.items():  # in place: g.direction is the step's scratch
            step = np.sign(g.direction, out=g.direction)
            step *= directions.step_size(self.spec, name, t)
            params[name] -= step


RULE = Rule(
    name="sign",
    settings=("lr", "lr_u", "schedule"),
    caption=lambda s: directions.with_schedule(f"sign descent lr={s.lr:g}", s),
    update=Sign,
    check=directions.check_schedule,
    implicit_norm=lambda s: "max",
    names={"sign": "sign descent"},
    # the family of steepest descent in the max norm (with nsd's l_inf member)
    looks={"sign": Look("sign", "*")},
)
