"""Normalized steepest descent: W <- W - lr_t D, D = argmax_{||D|| <= 1} <G, D> in the norm
`norm` ("max", "spectral" or an entrywise "l<p>"; u likewise, a vector's spectral norm
being l_2). Drawn in the family of its norm: sign descent's, spectral descent's, l_p's."""

from __future__ import annotations

import numpy as np

from attnbias.optim import directions
from attnbias.optim.rule import Look, Rule, Update


class NormalizedSteepestDescent(Update):
    def __init__(self, spec, params, seeds):
        super().__init__(spec, params, seeds)
        # the l_p direction's |G|, in a buffer made once: two fresh (B, d, d) arrays per
        # step cost their page faults (glibc hands the freed ones back to the system)
        self.scratch = {name: np.empty_like(value) for name, value in params.items()}

    def step(self, t, params, grads):
        kind, p = directions.descent_norm(self.spec.norm)
        for name, g in grads.items():
            step = directions.step_size(self.spec, name, t)
            cutoff = self.spec.polar_cutoff
            scratch = self.scratch[name]
            D = directions.steepest(kind, p, g, cutoff=cutoff, scratch=scratch)  # a new array
            D *= step
            params[name] -= D


def check(spec) -> None:
    directions.check_schedule(spec)
    directions.descent_norm(spec.norm)
    directions.check_polar_cutoff(spec)


def caption(spec) -> str:
    text = directions.with_schedule(f"NSD ({spec.norm}) lr={spec.lr:g}", spec)
    spectral = directions.descent_norm(spec.norm)[0] == "spectral"
    return directions.with_polar_cutoff(text, spec) if spectral else text


def look_key(spec, layout: str) -> str:
    kind, _ = directions.descent_norm(spec.norm)
    return f"nsd-{kind}"


RULE = Rule(
    name="nsd",
    settings=("lr", "lr_u", "schedule", "norm", "polar_cutoff"),
    caption=caption,
    update=NormalizedSteepestDescent,
    check=check,
    implicit_norm=lambda s: s.norm,
    look_key=look_key,
    examples=tuple({"norm": n} for n in ("max", "spectral", "l3")),
    names={"nsd": "normalized steepest descent"},
    looks={
        "nsd-max": Look("sign", "<", "long-dash"),
        "nsd-lp": Look("lp", ">"),
        "nsd-spectral": Look("spectral", "H", "dash-dot-dot"),
    },
)
