"""Gradient descent: W <- W - lr * grad (u likewise, with lr_u where set)."""

from __future__ import annotations

import math

from attnbias.optim.rule import Look, Rule, StepInputs, full_like


def log_step(s: StepInputs) -> dict:
    return {name: full_like(v, math.log(s.lrs[name])) for name, v in s.log_norms.items()}


RULE = Rule(
    name="gd",
    settings=("lr", "lr_u"),
    caption=lambda spec: f"GD lr={spec.lr:g}",
    log_step=log_step,
    kernel_code=0,
    implicit_norm=lambda spec: "fro",  # Tarzanagh et al. 2023
    names={"gd": "GD"},
    looks={"gd": Look("gd", "s")},
)
