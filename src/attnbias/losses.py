"""Losses of the margin z = y f(X), in log space.

Each loss gives three log-quantities that the stable gradients and the Polyak step need:
  log_value(z)          log l(z)
  log_neg_slope(z)      log(-l'(z)), the per-sample weight of the gradient
  log_excess(g, d, ld)  log(l(g - d) - l(g)) for d >= 0 given with log d: the loss above its
                        value with all attention on the optimal token (Polyak's L - L*)
Plain subtraction would return 0 once d < 1e-16 g, and the Polyak step would freeze.
"""

from __future__ import annotations

import torch


def log_expm1(x: torch.Tensor, log_x: torch.Tensor) -> torch.Tensor:
    """log(e^x - 1) for x >= 0, exact also when x underflows (then it is log x)."""
    small = x < 1e-8
    return torch.where(small, log_x + x / 2, torch.log(torch.expm1(torch.where(small, 1.0, x))))


def log_log1p_exp(x: torch.Tensor) -> torch.Tensor:
    """log(log(1 + e^x)), without underflow for very negative x."""
    small = x < -20
    return torch.where(small, x - torch.exp(x) / 2, torch.log(torch.nn.functional.softplus(x)))


class Exponential:
    name = "exponential"

    @staticmethod
    def log_value(z):
        return -z

    @staticmethod
    def log_neg_slope(z):
        return -z

    @staticmethod
    def log_excess(g, delta, log_delta):
        # e^{-(g - d)} - e^{-g} = e^{-g} expm1(d)
        return -g + log_expm1(delta, log_delta)


class Logistic:
    name = "logistic"

    @staticmethod
    def log_value(z):
        return log_log1p_exp(-z)

    @staticmethod
    def log_neg_slope(z):
        return -torch.nn.functional.softplus(z)  # log sigmoid(-z)

    @staticmethod
    def log_excess(g, delta, log_delta):
        # log(1+e^{-(g-d)}) - log(1+e^{-g}) = log1p(e^{-g} expm1(d) / (1 + e^{-g}))
        log_r = -g + log_expm1(delta, log_delta) - torch.nn.functional.softplus(-g)
        return log_log1p_exp(torch.where(torch.isfinite(log_r), log_r, -torch.inf))


LOSSES = {"exponential": Exponential, "logistic": Logistic}


def get_loss(name: str):
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose one of {sorted(LOSSES)}")
    return LOSSES[name]
