"""The metrics a sweep summarises: one number per run, from its training table and data.

A metric is a function of one optimizer's runs at one point (`Runs`: every seed, batched)
that returns one value per seed, registered under a name with `@metric`. Every metric is
"lower is faster": a sweep's claims compare them that way (a metric where higher is better
is registered negated). Per point, a metric's seeds are summarised by `aggregate` (mean or
median), after a run's NaN is replaced by `missing` where that has a meaning (a threshold
never crossed: infinitely late); otherwise NaN (a diverged run) is skipped by the mean and
counted in the runs' `diverged` column.

Adding a metric is one function and its decorator line:

    @metric("final_W_norm", "final ||W||")
    def _final_w_norm(runs):
        return runs.final("W_norm")

A metric that needs the point's data or SVM solutions (say the fraction of samples that
are support vectors of the u-SVM) reads `runs.datasets` and `runs.solutions` (one per seed,
the data and svm file contracts). Such metrics may live in another module: add the module
to PLUGINS below, and it registers its metrics when `registry()` imports it. The workflow
computes a point's metrics inside its training job (workflow/scripts/sweep_point.py): naming
another metric in an entry reruns that entry's points, and a change to this module (or to a
plugin the job imports) reruns the points of every sweep that is built again (the job's
code is its input).

numpy only, attnbias.data.hypotheses (numpy too), and the claims table's measuring layer
(attnbias.claims.measure: numpy and pandas), so that a sweep's numbers are the table's:
configcheck reads the names while the workflow parses.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnbias.claims import measure
from attnbias.data import hypotheses

# modules that register more metrics when imported (their names, for importlib)
PLUGINS: tuple[str, ...] = ()
CURVES = ("gap_W", "gap_u", "log_loss")  # the logged series a point keeps per run


@dataclass(frozen=True)
class Runs:
    """One optimizer's runs at one point: seeds batched (B of them)."""

    optimizer: str
    iterations: np.ndarray  # (L,) the logged iterations
    table: dict[str, np.ndarray]  # attnbias.training.loop.train's metrics, {name: (B, L)}
    datasets: list[dict]  # per seed, the data file contract (X, y, opt, W0, [u])
    solutions: list[dict]  # per seed, svm.to_arrays (W_mm, [u_mm], ...)

    def series(self, name: str) -> np.ndarray:
        """(B, L); all NaN where the table lacks it (gap_u of a fixed decoder)."""
        if name in self.table:
            return np.asarray(self.table[name], dtype=float)
        return np.full((len(self.datasets), len(self.iterations)), np.nan)

    def final(self, name: str) -> np.ndarray:
        return self.series(name)[:, -1]


@dataclass(frozen=True)
class Metric:
    name: str
    label: str  # axis label of the sweep's figure
    fn: Callable[[Runs], np.ndarray]
    aggregate: str = "mean"  # over seeds: mean or median
    missing: float | None = None  # a NaN run's value, where NaN means "not reached"
    scale: str = "linear"  # the figure's y axis (log: iterations, which span decades)


METRICS: dict[str, Metric] = {}


def metric(
    name: str,
    label: str,
    *,
    aggregate: str = "mean",
    missing: float | None = None,
    scale: str = "linear",
):
    """Register the decorated `fn(runs: Runs) -> (B,) array` as metric `name`."""
    if aggregate not in ("mean", "median"):
        raise ValueError(f"metric {name}: aggregate is mean or median, got {aggregate!r}")

    def register(fn):
        if name in METRICS:
            raise ValueError(f"metric {name} is registered twice")
        METRICS[name] = Metric(name, label, fn, aggregate, missing, scale)
        return fn

    return register


def registry() -> dict[str, Metric]:
    """Every metric, the plugins' included."""
    for module in PLUGINS:
        importlib.import_module(module)
    return METRICS


def compute(names: list[str], runs: Runs) -> dict[str, np.ndarray]:
    """{name: (B,)} for the named metrics, with `missing` in place of NaN where it is set."""
    out = {}
    for name in names:
        m = registry()[name]
        values = np.asarray(m.fn(runs), dtype=float)
        out[name] = values if m.missing is None else np.where(np.isnan(values), m.missing, values)
    return out


def _log10(values: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(values)


@metric("final_log10_gap_W", r"final $\log_{10}(1 - \cos(W_t, W_{mm}))$")
def _final_gap_w(runs: Runs) -> np.ndarray:
    return _log10(runs.final("gap_W"))


@metric("final_log10_gap_u", r"final $\log_{10}(1 - \cos(u_t, u_{mm}))$")
def _final_gap_u(runs: Runs) -> np.ndarray:
    return _log10(runs.final("gap_u"))


@metric("final_log_loss", r"final $\log L(W_t, u_t)$")
def _final_log_loss(runs: Runs) -> np.ndarray:
    return runs.final("log_loss")


@metric("final_log1m_opt_softmax", r"final $\log(1 - \mathrm{mean\ opt\ softmax})$")
def _final_softmax(runs: Runs) -> np.ndarray:
    return runs.final("log1m_opt_softmax")


def _crossing(threshold: str):
    """The exact first iteration with 1 - cos(W_t, W_mm) below `threshold` (the kernel's)."""
    return lambda runs: runs.final(f"first_gap_W_below_{threshold}")


# not reached within the run: infinitely late; the median seed (a mean would be inf)
for _text, _key in (("1e-2", "0.01"), ("1e-3", "0.001")):
    metric(
        f"first_W_below_{_text}",
        f"first $t$ with $1 - \\cos(W_t, W_{{mm}}) < 10^{{{_text[2:]}}}$",
        aggregate="median",
        missing=np.inf,
        scale="log",
    )(_crossing(_key))


@metric(
    "non_support_fraction",
    "fraction of samples not u-SVM support vectors (Lem. 11)",
)
def _non_support_fraction(runs: Runs) -> np.ndarray:
    """1 - the fraction of samples whose optimal token is a support vector of the point's
    u-SVM (attnbias.data.hypotheses.u_svm_support): 0 inside Lem. 11's regime."""
    return np.array(
        [
            1.0 - hypotheses.u_svm_support(d["X"], d["y"], d["opt"], s["u_mm"])["cond1_sv_fraction"]
            for d, s in zip(runs.datasets, runs.solutions, strict=True)
        ]
    )


@metric("loss_ratio_growth", r"growth of $\max_t \ln(\max_i l_i / \min_i l_i)$ (Lem. 11)")
def _loss_ratio_growth(runs: Runs) -> np.ndarray:
    """The claims table's Lem. 11 (iii) quantity (measure.late_max_growth): the largest ln
    loss ratio across samples over the logged t in [t_last / 10, t_last], minus the largest
    over [0, t_last / 10] (bounded: near 0 or below). NaN for a fixed decoder, whose table
    has no loss ratio."""
    return measure.late_max_growth(runs.iterations, runs.series("log_loss_ratio"))


RATE_FROM = 0.1  # the fitted rates use the logged iterations from this fraction of the run


def _late_slopes(runs: Runs, values: np.ndarray, x_of_t) -> np.ndarray:
    """Per seed, the least-squares slope (measure.fit) of `values` against x_of_t(t) over
    the logged t >= RATE_FROM of the run; NaN where fewer than three such points are finite."""
    t = np.asarray(runs.iterations, dtype=float)
    keep = t >= max(2.0, RATE_FROM * t[-1])
    out = np.full(len(values), np.nan)
    for i, row in enumerate(values):
        ok = keep & np.isfinite(row)
        if ok.sum() >= 3:
            out[i] = measure.fit(x_of_t(t[ok]), row[ok])[0]
    return out


@metric("rate_W", r"fitted rate: slope of $\log(1-\cos(W_t,W_{mm}))$ vs $\log t$")
def _rate_w(runs: Runs) -> np.ndarray:
    """Slope of ln gap_W against ln t (NGD's t^-2 gives -2; Thm. 1's bound -3/4): the
    claims table's rate of Thm. 1 and Thm. 7."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _late_slopes(runs, np.log(runs.series("gap_W")), np.log)


@metric("rate_W_lnln", r"slope vs $\ln \ln t$ (Thm. 3)")
def _rate_w_lnln(runs: Runs) -> np.ndarray:
    """Thm. 3's quantity in the claims table: slope of ln gap_W against ln ln t."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _late_slopes(runs, np.log(runs.series("gap_W")), lambda t: np.log(np.log(t)))


@metric("loss_exponent", r"$-k$ of $-\ln L \sim t^k$ (Thm. 2)")
def _loss_exponent(runs: Runs) -> np.ndarray:
    """Thm. 2's quantity in the claims table, negated: -k of -ln L ~ t^k (slope of
    ln(-ln L) against ln t)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return -_late_slopes(runs, np.log(-runs.series("log_loss")), np.log)
