"""Losses of the margin z = y f(X), in log space.

Each loss gives the log-quantities that the stable gradients and the Polyak step need:
  log_value(z)           log l(z)
  log_neg_slope(z)       log(-l'(z)), the per-sample weight of the gradient
  log_excess(g, d, lad, sd)  log|l(g - d) - l(g)| and its sign, for d given with
                         lad = log|d| and its sign sd (d itself may underflow to 0):
                         the loss above its value with all attention on the optimal token
                         (Polyak's L - L*; negative where opt is not the best token)
Plain subtraction would return 0 once d < 1e-16 g, and the Polyak step would freeze.
"""

from __future__ import annotations

import torch


def softplus(x: torch.Tensor) -> torch.Tensor:
    """log(1 + e^x), exact everywhere (torch's softplus returns x itself above x = 20)."""
    return torch.logaddexp(x, torch.zeros_like(x))


def log_abs_expm1(x: torch.Tensor, log_abs_x: torch.Tensor) -> torch.Tensor:
    """log|e^x - 1|, exact also when x underflows (then it is log|x|)."""
    small = x.abs() < 1e-8
    return torch.where(
        small, log_abs_x + x / 2, torch.log(torch.expm1(torch.where(small, 1.0, x)).abs())
    )


def log_abs_log1p(sign: torch.Tensor, log_abs_r: torch.Tensor) -> torch.Tensor:
    """log|log(1 + r)| for r = sign * e^log_abs_r > -1, exact for tiny |r|."""
    r = sign * torch.exp(log_abs_r)
    small = log_abs_r < -20
    return torch.where(
        small, log_abs_r - r / 2, torch.log(torch.log1p(torch.where(small, 1.0, r)).abs())
    )


def log_log1p_exp(x: torch.Tensor) -> torch.Tensor:
    """log(log(1 + e^x)), without underflow for very negative x."""
    small = x < -20
    return torch.where(small, x - torch.exp(x) / 2, torch.log(softplus(torch.where(small, 0.0, x))))


class Exponential:
    name = "exponential"

    @staticmethod
    def log_value(z):
        return -z

    @staticmethod
    def log_neg_slope(z):
        return -z

    @staticmethod
    def log_excess(g, delta, log_abs_delta, delta_sign):
        # e^{-(g - d)} - e^{-g} = e^{-g} expm1(d)
        return -g + log_abs_expm1(delta, log_abs_delta), delta_sign


class Logistic:
    name = "logistic"

    @staticmethod
    def log_value(z):
        return log_log1p_exp(-z)

    @staticmethod
    def log_neg_slope(z):
        return -softplus(z)  # log sigmoid(-z)

    @staticmethod
    def log_excess(g, delta, log_abs_delta, delta_sign):
        # log(1+e^{-(g-d)}) - log(1+e^{-g}) = log1p(r), r = e^{-g} expm1(d) / (1 + e^{-g})
        log_abs_r = -g + log_abs_expm1(delta, log_abs_delta) - softplus(-g)
        return log_abs_log1p(delta_sign, log_abs_r), delta_sign


LOSSES = {"exponential": Exponential, "logistic": Logistic}


def get_loss(name: str):
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose one of {sorted(LOSSES)}")
    return LOSSES[name]
