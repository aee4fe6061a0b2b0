"""SGD on torch parameters (the real-data runs): torch.optim.SGD, p <- p - lr g with the
mini-batch gradient g (heavy-ball momentum optional). GD's stochastic version, drawn in its
family."""

from __future__ import annotations

from attnbias.optim.rule import MOMENTUM, STEP, Look, Rule, TorchOptimizer, setting

RULE = Rule(
    name="sgd",
    torch=TorchOptimizer(
        "torch.optim:SGD",
        {
            "lr": setting("step size", **STEP),
            "momentum": setting("heavy-ball coefficient, in [0, 1)", **MOMENTUM),
            "dampening": setting("torch.optim.SGD's dampening", minimum=0),
            "weight_decay": setting("torch's weight decay", minimum=0),
            "nesterov": setting("torch.optim.SGD's Nesterov momentum", type="boolean"),
        },
    ),
    names={"sgd": "SGD"},
    looks={"sgd": Look("gd", "s", "stochastic")},
)
