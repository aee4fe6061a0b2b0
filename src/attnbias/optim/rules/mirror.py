"""Mirror descent with psi(W) = ||W||_p^p / p (entrywise): the dual variable
Z = grad psi(W) = sign(W) |W|^(p-1) takes the gradient step, Z <- Z - lr G, and
W = sign(Z) |Z|^(1/(p-1)). Z starts at grad psi(W0) and is kept per run (u likewise).

Normalised (AttentionMD's l_p-AttGD and l_p-JointGD, `dual_normalize`): Z <- Z - lr G / N
with N the gradient's dual norm ||G||_q, 1/p + 1/q = 1, of each block (per_block: W and u
each by its own, as their joint runs) or of all blocks at once (global). N is formed in
logs (directions.log_coefficients): theirs adds 2.2e-16 to it, so their step vanishes
once the loss underflows; ours is lr G~ / ||G~||_q and never does."""

from __future__ import annotations

import numpy as np

from attnbias.optim import directions
from attnbias.optim.directions import per_run
from attnbias.optim.lp_norm import check_p, lp_name
from attnbias.optim.rule import Look, Rule, Update


def _signed_power(Z: np.ndarray, power: float, out: np.ndarray | None = None) -> np.ndarray:
    """sign(Z) |Z|^power (copysign: one pass fewer than a product with sign(Z)), into `out`
    where given (not Z itself). `**=` takes numpy's scalar-power shortcuts as `**` does
    (power 0.5: a square root, 2: a square), so the bits are the same either way."""
    magnitude = np.abs(Z, out=out)
    magnitude **= power
    return np.copysign(magnitude, Z, out=magnitude)


def dual_exponent(p: float) -> float:
    """q with 1/p + 1/q = 1: the exponent of the dual norm of l_p."""
    return p / (p - 1)


class Mirror(Update):
    def __init__(self, spec, params, seeds):
        super().__init__(spec, params, seeds)
        self.state = {name: _signed_power(value, spec.p - 1) for name, value in params.items()}
        # the step's lr G of each block, in a buffer made once (no (B, d, d) array per step)
        self.scratch = {name: np.empty_like(value) for name, value in params.items()}

    def step(self, t, params, grads):
        lrs = {name: self.spec.lr_of(name) for name in grads}
        blocks = {name: (g.log_scale, g.direction) for name, g in grads.items()}
        log_coefs = directions.log_coefficients(self.spec, lrs, blocks, dual_exponent(self.spec.p))
        for name, g in grads.items():
            coef = directions.coefficient(log_coefs[name])
            step = np.multiply(per_run(coef, g.direction), g.direction, out=self.scratch[name])
            self.state[name] -= step
            _signed_power(self.state[name], 1 / (self.spec.p - 1), out=params[name])


def check(spec) -> None:
    # p > 1 for the potential; within lp_norm's range so that its l_p norm has a name
    check_p(spec.p, "mirror descent (key p: psi = ||W||_p^p / p)")
    directions.check_dual_normalize(spec)


def caption(spec) -> str:
    text = f"l_{spec.p:g} mirror descent lr={spec.lr:g}"
    return directions.with_dual_normalize(text, spec, f"{dual_exponent(spec.p):.4g}")


RULE = Rule(
    name="mirror",
    settings=("lr", "lr_u", "p", "dual_normalize"),
    caption=caption,
    update=Mirror,
    check=check,
    implicit_norm=lambda s: lp_name(s.p),
    algorithm=lambda spec, layout: "mirror" if spec.dual_normalize == "none" else "nmirror",
    examples=({"p": 3.0}, {"p": 3.0, "dual_normalize": "per_block"}),
    names={
        "mirror": "l_p mirror descent",
        "nmirror": "normalised l_p mirror descent (AttentionMD's)",
    },
    # the l_p family, with nsd's l_p member: both are expected to find the l_p margin
    looks={"mirror": Look("lp", "p", "long-dash"), "nmirror": Look("lp", "p", "dash-dot-dot")},
)
