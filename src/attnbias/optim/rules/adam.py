"""Full-batch Adam with bias correction: m <- b1 m + (1-b1) G, v <- b2 v + (1-b2) G^2,
W <- W - lr_t m^ / (sqrt(v^) + eps), m^ = m / (1 - b1^(t+1)), v^ likewise. m and v are
kept as e^a m~, e^c v~ (directions.accumulate), and the step's per-run factors are formed in
logs: eps is an absolute scale, so with gradients of e^-700 the plain formula would give
0 / eps where exact arithmetic gives m / eps (see directions' module doc). On torch
parameters (the real-data runs) it is torch.optim.Adam, the same algorithm, drawn alike."""

from __future__ import annotations

import math

import numpy as np

from attnbias.optim import directions
from attnbias.optim.directions import per_run
from attnbias.optim.rule import STEP, Look, Rule, TorchOptimizer, Update, setting


def _log_or_minus_inf(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


class Adam(Update):
    def step(self, t, params, grads):
        s = self.spec
        log_b1, log_b2 = _log_or_minus_inf(s.beta1), _log_or_minus_inf(s.beta2)
        for name, g in grads.items():
            G = g.direction
            log_m, m = directions.accumulate(
                self.state.get((name, "m")), log_b1, g.log_scale + math.log1p(-s.beta1), G
            )
            G *= G  # in place: g.direction is the step's scratch
            log_v, v = directions.accumulate(
                self.state.get((name, "v")), log_b2, 2 * g.log_scale + math.log1p(-s.beta2), G
            )
            self.state[(name, "m")], self.state[(name, "v")] = (log_m, m), (log_v, v)
            # m^ / (sqrt(v^) + eps) = head m~ / (root sqrt(v~) + e^(log eps - k)), with
            # head = e^(log_m - k) / (1 - b1^(t+1)), root = e^(log_v / 2 - k) / sqrt(1 - b2^(t+1))
            # and k = max(log_v / 2, log eps) per run: no factor above 1, nothing overflows
            k = np.maximum(log_v / 2, math.log(s.eps))
            with np.errstate(invalid="ignore", over="ignore"):
                root = directions.coefficient(log_v / 2 - k) / math.sqrt(1 - s.beta2 ** (t + 1))
                head = directions.coefficient(log_m - k) / (1 - s.beta1 ** (t + 1))
            den = np.sqrt(v, out=G)
            den *= per_run(root, den)
            den += per_run(np.exp(math.log(s.eps) - k), den)
            step = np.divide(m, den, out=den)
            step *= per_run(directions.step_size(s, name, t) * head, step)
            params[name] -= step


def check(spec) -> None:
    directions.check_schedule(spec)
    if not (0.0 <= spec.beta1 < 1.0 and 0.0 <= spec.beta2 < 1.0):
        raise ValueError(f"beta1, beta2 must lie in [0, 1), got {spec.beta1}, {spec.beta2}")
    if not spec.eps > 0:
        raise ValueError(f"eps must be > 0, got {spec.eps}")


RULE = Rule(
    name="adam",
    settings=("lr", "lr_u", "schedule", "beta1", "beta2", "eps"),
    caption=lambda s: directions.with_schedule(
        f"Adam lr={s.lr:g} betas=({s.beta1:g}, {s.beta2:g}) eps={s.eps:g}", s
    ),
    update=Adam,
    check=check,
    implicit_norm=lambda s: "max",
    names={"adam": "Adam"},
    looks={"adam": Look("adam", "X")},
    torch=TorchOptimizer(
        "torch.optim:Adam",
        {
            "lr": setting("step size", **STEP),
            "betas": {
                "description": "Adam's (beta1, beta2)",
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "items": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
            },
            "eps": setting("Adam's epsilon", exclusiveMinimum=0),
            "weight_decay": setting("torch's weight decay", minimum=0),
            "amsgrad": setting("Adam's AMSGrad variant", type="boolean"),
        },
    ),
)
