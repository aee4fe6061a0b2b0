"""SNGD on torch parameters (the real-data runs): p <- p - min(lr / ||g||, max_step) g with
one norm over every parameter (optim.stochastic.SNGD). NGD's stochastic version, drawn in
its family."""

from __future__ import annotations

from attnbias.optim.rule import MOMENTUM, STEP, Look, Rule, TorchOptimizer, setting

RULE = Rule(
    name="sngd",
    torch=TorchOptimizer(
        "attnbias.optim.stochastic:SNGD",
        {
            "lr": setting("the normalised step length lr in lr / ||g||", **STEP),
            "momentum": setting("heavy-ball coefficient, in [0, 1)", **MOMENTUM),
            "max_step": setting(
                "cap on the normalised step lr / ||g|| (null: none; a binding cap makes the "
                "step GD with step max_step)",
                type=["number", "null"],
                exclusiveMinimum=0,
            ),
        },
    ),
    names={"sngd": "SNGD"},
    looks={"sngd": Look("ngd", "o", "stochastic")},
)
