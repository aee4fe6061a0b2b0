"""Losses of the margin z = y f(X), in log space.

Each loss gives the log-quantities that the stable gradients and the Polyak step need:
  log_value(z)           log l(z)
  log_neg_slope(z)       log(-l'(z)), the per-sample weight of the gradient
  log_excess(g, d, lad, sd)  log|l(g - d) - l(g)| and its sign, for d given with
                         lad = log|d| and its sign sd (d itself may underflow to 0):
                         the loss above its value with all attention on the optimal token
                         (Polyak's L - L*; negative where opt is not the best token)
Plain subtraction would return 0 once d < 1e-16 g, and the Polyak step would freeze.

Written once for torch tensors (the stable gradients, the reference loop) and numpy arrays
(the compiled kernel's metrics): each function works in the module of its argument
(arrays.namespace), and this module imports neither.
"""

from __future__ import annotations

from attnbias.model.arrays import namespace


def softplus(x):
    """log(1 + e^x), exact everywhere (torch's softplus returns x itself above x = 20)."""
    xp = namespace(x)
    return xp.logaddexp(x, xp.zeros_like(x))


def log_abs_expm1(x, log_abs_x):
    """log|e^x - 1|, exact also when x underflows (then it is log|x|)."""
    xp = namespace(x)
    small = xp.abs(x) < 1e-8
    return xp.where(small, log_abs_x + x / 2, xp.log(xp.abs(xp.expm1(xp.where(small, 1.0, x)))))


def log_abs_log1p(sign, log_abs_r):
    """log|log(1 + r)| for r = sign * e^log_abs_r > -1, exact for tiny |r|."""
    xp = namespace(log_abs_r)
    r = sign * xp.exp(log_abs_r)
    small = log_abs_r < -20
    return xp.where(small, log_abs_r - r / 2, xp.log(xp.abs(xp.log1p(xp.where(small, 1.0, r)))))


def log_log1p_exp(x):
    """log(log(1 + e^x)), without underflow for very negative x."""
    xp = namespace(x)
    small = x < -20
    return xp.where(small, x - xp.exp(x) / 2, xp.log(softplus(xp.where(small, 0.0, x))))


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
