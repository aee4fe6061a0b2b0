"""SPS on torch parameters (the real-data runs): the stochastic Polyak step, SPS_max
(Loizou et al. 2021), p <- p - min(eta_max, (loss - f_star) / (c ||g||^2)) g
(optim.stochastic.SPS). The Polyak step's stochastic version, drawn in its family."""

from __future__ import annotations

from attnbias.optim.rule import STEP, Look, Rule, TorchOptimizer, setting

RULE = Rule(
    name="sps",
    torch=TorchOptimizer(
        "attnbias.optim.stochastic:SPS",
        {
            "eta_max": setting("SPS: cap on the step", **STEP),
            "c": setting("SPS's constant c in the step (L - f*) / (c ||g||^2)", exclusiveMinimum=0),
            "f_star": setting("SPS: the loss value the step aims at (default 0)"),
        },
    ),
    names={"sps": "SPS"},
    looks={"sps": Look("ps", "^", "stochastic")},
)
