"""The few array operations that numpy and torch spell differently, for formulas written once.

The losses and the training metrics are written once against an array module `xp`, numpy
(the compiled kernel's metrics) or torch (the reference loop, on its device). numpy 2 and
torch share the elementwise functions (exp, log, expm1, log1p, logaddexp, where, sign, ...)
and the reductions' keywords (torch accepts numpy's axis= and keepdims=), so only four
things differ, each with a helper here:

  namespace         the module of an array, without importing torch for a numpy one;
  logsumexp         torch's own, and the same rule in numpy, which has none;
  log_softmax       likewise;
  take_along        torch.take_along_dim is numpy's take_along_axis.

Built on them, once for both: signed_logsumexp (log|sum sign e^x| and its sign: the
attention's delta where gaps have both signs, the excess loss's sum) and log_mean.

array-api-compat was weighed and not used: these three differences are all we meet, its
standard has no logsumexp (that helper would stay), and it would add a dependency to the
torch-free training job and to every environment that imports the training code.
"""

from __future__ import annotations

import math
import sys

import numpy as np


def namespace(x):
    """numpy or torch: the module of the array `x` (torch only if x is a tensor, so numpy
    callers never import it)."""
    return sys.modules[type(x).__module__.partition(".")[0]]


def logsumexp(xp, x, axis: int = -1):
    """log(sum(e^x)) along `axis`, as torch.logsumexp: -inf for all -inf, +inf where any
    is +inf."""
    if xp is not np:
        return xp.logsumexp(x, dim=axis)
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - top), axis=axis)) + np.squeeze(top, axis)
    inf = np.isinf(x).any(axis=axis) & (np.max(x, axis=axis) == np.inf)
    return np.where(inf, np.inf, out)


def log_softmax(xp, x, axis: int = -1):
    """log(softmax(x)) along `axis`, as torch.log_softmax: x less its logsumexp, taken
    from the largest entry so that nothing overflows."""
    if xp is not np:
        return xp.log_softmax(x, dim=axis)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def signed_logsumexp(xp, log_abs, sign, axis: int = -1):
    """log|sum sign * e^log_abs| and its sign, along `axis`; -inf (sign 0) for an empty sum."""
    top = xp.amax(log_abs, axis=axis, keepdims=True)
    top = xp.where(top == -math.inf, 0.0, top)
    total = xp.sum(sign * xp.exp(log_abs - top), axis=axis)
    return xp.log(xp.abs(total)) + xp.squeeze(top, axis=axis), xp.sign(total)


def take_along(xp, x, index, axis: int = -1):
    """x's entries at `index` along `axis` (index with x's number of dimensions)."""
    if xp is np:
        return np.take_along_axis(x, index, axis)
    return xp.take_along_dim(x, index, axis)


def log_mean(xp, log_values, axis: int = -1):
    """log(mean(e^x)) along `axis`."""
    return logsumexp(xp, log_values, axis) - np.log(log_values.shape[axis])
