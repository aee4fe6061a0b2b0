"""The Polyak step: W <- W - min((L - f*) / ||grad||^2, eta_max) * grad, one norm over all
trained blocks."""

from __future__ import annotations

from attnbias.optim.rule import Look, Rule, StepInputs, capped


def log_step(s: StepInputs) -> dict:
    log_excess = s.log_excess()
    return capped({name: log_excess - 2 * v for name, v in s.log_norms.items()}, s.spec.eta_max)


def check(spec) -> None:
    if spec.normalize == "per_block":
        # (L - f*) / ||g_W||^2 explodes while g_W is tiny next to g_u (at u ~ 0).
        raise ValueError("the Polyak step takes the norm over all blocks: normalize='global'")


def check_polyak_fires(spec, initial_loss: float) -> None:
    """A Polyak step with a number f* at or above the initial loss never steps: refuse it
    (Rule.check_start: training.loop asks it of each run)."""
    if spec.f_star == "opt" or initial_loss > spec.f_star:
        return
    raise ValueError(
        f"Polyak step with f_star={spec.f_star:g} never steps: f* is at or above the initial "
        f"loss ({initial_loss:.6g}); set f_star below it (0 is the infimum of the loss)"
    )


def _eta_max(spec) -> str:
    return "none" if spec.eta_max is None else f"{spec.eta_max:g}"


RULE = Rule(
    name="polyak",
    settings=("eta_max", "f_star", "normalize"),  # normalize: global only (check)
    caption=lambda spec: f"Polyak step eta_max={_eta_max(spec)}",
    log_step=log_step,
    check=check,
    check_start=check_polyak_fires,
    cap="eta_max",
    kernel_code=2,
    algorithm=lambda spec, layout: "ps" if spec.eta_max is None else "ps-capped",
    implicit_norm=lambda spec: "fro",  # this paper: the Polyak step's W_mm
    examples=({"f_star": 0.0}, {"f_star": 0.0, "eta_max": 1.0}),
    names={"ps": "PS (uncapped)", "ps-capped": "PS with a step cap"},
    looks={"ps": Look("ps", "^"), "ps-capped": Look("ps", "^", "capped")},
)
