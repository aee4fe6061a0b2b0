"""Normalized gradient descent: W <- W - min(lr / ||grad||, max_step) * grad, with one norm
over all trained blocks (normalize "global") or one per block ("per_block"). With the
settings every step-length rule takes (momentum, Eq. 10's decay factors) it runs as the
paper's several NGD algorithms (`algorithm`)."""

from __future__ import annotations

import math

from attnbias.optim.rule import Look, Rule, StepInputs, capped


def log_step(s: StepInputs) -> dict:
    lengths = {name: math.log(s.lrs[name]) - v for name, v in s.log_norms.items()}
    return capped(lengths, s.spec.max_step)


def algorithm(spec, layout: str) -> str:
    """Which of the paper's NGD algorithms these settings are (claims.coverage)."""
    if spec.decay_W or spec.decay_u:
        return "eq10"
    capped_ = "" if spec.max_step is None else "-capped"
    if spec.momentum:
        return "ngd-mom" + capped_
    if layout == "joint":
        return "per-block-ngd" if spec.normalize == "per_block" else "joint-ngd"
    return "ngd" + capped_


RULE = Rule(
    name="ngd",
    settings=("lr", "lr_u", "max_step", "normalize"),
    caption=lambda spec: f"NGD lr={spec.lr:g}",
    log_step=log_step,
    cap="max_step",
    kernel_code=1,
    implicit_norm=lambda spec: "fro",  # this paper, Thm. 1
    algorithm=algorithm,
    examples=(
        {},
        {"max_step": 10.0},
        {"momentum": 0.9},
        {"momentum": 0.9, "max_step": 1.0},
        {"normalize": "per_block"},
        {"decay_W": 1.0},
    ),
    names={
        "ngd": "NGD (uncapped)",
        "ngd-capped": "NGD with a step cap",
        "ngd-mom": "NGD with momentum",
        "ngd-mom-capped": "NGD with momentum and a step cap",
        "per-block-ngd": "per-block NGD, Eq. 10 without its step factors",
        "joint-ngd": "joint NGD, one norm over (W, u)",
        "eq10": "Eq. 10 with its step factors",
    },
    # NGD with momentum, joint NGD and Eq. 10 are families of their own: Fig. 2 and
    # Fig. 3 set them against NGD, each in a colour of its own
    looks={
        "ngd": Look("ngd", "o"),
        "ngd-capped": Look("ngd", "o", "capped"),
        "per-block-ngd": Look("ngd", "o", "per-block"),
        "ngd-mom": Look("ngd-mom", "D"),
        "ngd-mom-capped": Look("ngd-mom", "D", "capped"),
        "joint-ngd": Look("joint-ngd", "v"),
        "eq10": Look("eq10", "P"),
    },
)
