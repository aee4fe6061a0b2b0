"""How a run of the global-convergence study ends (attnbias.studies.global_outcomes): each
outcome, and for each a one-change control that makes it read each of the others."""

from __future__ import annotations

import numpy as np
import pytest

from attnbias.studies import global_outcomes
from attnbias.training.metrics import log_grid

GRID = log_grid(3000, 100)


def _gap(power: float) -> np.ndarray:
    """0.9 (ln t / ln 2)^-power on the grid (0.9 for t < 2): its late slope against
    ln ln t is exactly -power. power 2 ends at 6.7e-3 (t = 3000)."""
    t = np.maximum(GRID.astype(float), 2.0)
    return 0.9 * (np.log(t) / np.log(2.0)) ** -power


def _rising_at_the_end(gap: np.ndarray) -> np.ndarray:
    out = gap.copy()
    out[-1] = 1.01 * out[-2]
    return out


def _left_range(gap: np.ndarray) -> np.ndarray:
    return np.full_like(gap, np.nan)  # the trainer gives such a run NaN everywhere


def _flat_at_the_end(gap: np.ndarray) -> np.ndarray:
    """The same curve, levelled off over its last decade (a plateau)."""
    return np.where(GRID >= GRID[-1] / 10, gap[GRID >= GRID[-1] / 10][0], gap)


# one base curve (falling like (ln t)^-2, faster than 1/ln t) and one change each
CASES = {
    "reached": (_gap(2.0), 1e-2),
    "undecided": (_gap(2.0), 1e-3),
    "slower": (_gap(0.5), 1e-3),  # slope -0.5 > -1: still falls, more slowly than 1/ln t
    "left_float64": (_left_range(_gap(2.0)), 1e-3),
    "failed": (_rising_at_the_end(_gap(2.0)), 1e-3),
}
# every outcome reached from every other case by one change
CONTROLS = {
    ("reached", "undecided"): (_gap(2.0), 1e-3),  # a lower threshold
    ("reached", "slower"): (_gap(0.5), 1e-3),
    ("reached", "left_float64"): (_left_range(_gap(2.0)), 1e-2),  # overflow after reaching
    ("reached", "failed"): (_flat_at_the_end(_gap(2.0)), 1e-3),  # levelled off short of it
    ("undecided", "reached"): (_gap(2.0), 1e-2),
    ("undecided", "slower"): (_gap(0.99), 1e-3),  # just slower than 1/ln t
    ("undecided", "left_float64"): (_left_range(_gap(2.0)), 1e-3),
    ("undecided", "failed"): (_rising_at_the_end(_gap(2.0)), 1e-3),
    ("slower", "reached"): (_gap(0.5), 0.5),
    ("slower", "undecided"): (_gap(1.0), 1e-3),  # exactly 1/ln t still counts
    ("slower", "left_float64"): (_left_range(_gap(0.5)), 1e-3),
    ("slower", "failed"): (_rising_at_the_end(_gap(0.5)), 1e-3),
    ("left_float64", "reached"): (_gap(2.0), 1e-2),
    ("left_float64", "undecided"): (_gap(2.0), 1e-3),
    ("left_float64", "slower"): (_gap(0.5), 1e-3),
    ("left_float64", "failed"): (np.full_like(GRID, 0.2, dtype=float), 1e-3),  # flat
    ("failed", "reached"): (_rising_at_the_end(_gap(2.0)), 1e-2),  # reached before the rise
    ("failed", "undecided"): (_gap(2.0), 1e-3),
    ("failed", "slower"): (_gap(0.5), 1e-3),
    ("failed", "left_float64"): (_left_range(_rising_at_the_end(_gap(2.0))), 1e-3),
}


def _one(gap: np.ndarray, threshold: float) -> str:
    outcome, _ = global_outcomes.classify(GRID, gap[None], threshold)
    return outcome[0]


@pytest.mark.parametrize("outcome", list(CASES))
def test_each_outcome(outcome):
    assert _one(*CASES[outcome]) == outcome


@pytest.mark.parametrize("pair", list(CONTROLS))
def test_a_control_for_each_other_outcome(pair):
    _, other = pair
    assert _one(*CONTROLS[pair]) == other


def test_batch_classifies_each_run_alone():
    names = ["undecided", "slower", "left_float64", "failed"]
    outcome, slopes = global_outcomes.classify(GRID, np.stack([CASES[o][0] for o in names]), 1e-3)
    assert outcome.tolist() == names
    np.testing.assert_allclose(slopes[[0, 1, 3]], [-2.0, -0.5, -2.0], atol=0.05)
    assert np.isnan(slopes[2])


def test_every_outcome_is_a_claims_outcome():
    assert set(CASES) == set(global_outcomes.OUTCOMES)


@pytest.mark.parametrize("power", [0.5, 1.0, 3.0])
def test_late_slope_is_the_power_of_ln_t(power):
    (slope,) = global_outcomes.late_slopes(GRID, _gap(power)[None])
    assert slope == pytest.approx(-power, rel=1e-9)


def test_late_slope_reads_the_last_decade_only():
    gap = _gap(2.0)
    early = GRID < GRID[-1] / 10
    bent = np.where(early, 0.5, gap)  # flat before the last decade
    np.testing.assert_allclose(global_outcomes.late_slopes(GRID, bent[None]), [-2.0], rtol=1e-9)


def test_too_short_a_grid_is_refused_naming_the_keys():
    with pytest.raises(ValueError, match="global_convergence.iterations or log_points"):
        global_outcomes.late_slopes(np.array([0, 1, 2, 3]), np.ones((1, 4)))


# ---------------------------------------------------------------- why PS leaves float64


def _exact_polyak(ds, W0, steps: int, digits: int = 40):
    """Uncapped PS with f* = L* (the loss's infimum) in mpmath: the paper's plain formulas,
    no logs, unbounded exponents. Returns ln eta_t for t < steps and log10 ||W_steps||."""
    mp = pytest.importorskip("mpmath").mp.clone()
    mp.dps = digits
    X = [[[mp.mpf(float(v)) for v in tok] for tok in seq] for seq in ds["X"]]
    u = [mp.mpf(float(v)) for v in ds["u"]]
    n, T, d = ds["X"].shape
    gamma = [[mp.mpf(float(ds["y"][i])) * mp.fdot(X[i][t], u) for t in range(T)] for i in range(n)]
    L_star = mp.fsum(mp.exp(-gamma[i][ds["opt"][i]]) for i in range(n)) / n
    W = [[mp.mpf(float(v)) for v in row] for row in W0]
    log_eta = []
    for _ in range(steps):
        losses, G = [], [[mp.zero] * d for _ in range(d)]
        for i in range(n):
            x1 = X[i][0]
            Wx1 = [mp.fdot(W[a], x1) for a in range(d)]
            z = [mp.fdot(X[i][t], Wx1) for t in range(T)]
            e = [mp.exp(v - max(z)) for v in z]
            s = [v / mp.fsum(e) for v in e]
            margin = mp.fsum(s[t] * gamma[i][t] for t in range(T))
            losses.append(mp.exp(-margin))
            c = [mp.exp(-margin) * s[t] * (margin - gamma[i][t]) / n for t in range(T)]
            v = [mp.fsum(c[t] * X[i][t][a] for t in range(T)) for a in range(d)]
            G = [[G[a][b] + v[a] * x1[b] for b in range(d)] for a in range(d)]
        eta = (mp.fsum(losses) / n - L_star) / mp.fsum(g * g for row in G for g in row)
        log_eta.append(float(mp.log(eta)))
        W = [[W[a][b] - eta * G[a][b] for b in range(d)] for a in range(d)]
    return np.array(log_eta), float(mp.log10(mp.sqrt(mp.fsum(w * w for row in W for w in row))))


@pytest.mark.parametrize("scale, leaves", [(100.0, True), (1.0, False)])
def test_a_polyak_run_leaves_float64_where_its_exact_iterate_does(scale, leaves):
    """An uncapped Polyak run that stops being finite is the algorithm's iterate outgrowing
    float64 (docs/studies.md), not a quantity that the log-domain forms would keep finite:
    the float64 trainer's step sizes equal the exact ones up to the step where it stops, and
    there the exact ||W|| is beyond 10^308. The control: a start of norm 1 stays finite, in
    float64 and exactly."""
    from attnbias.data.models import perturbed_example1
    from attnbias.optim.spec import OptimizerSpec
    from attnbias.studies import global_convergence
    from attnbias.svm import max_margin
    from attnbias.training import dispatch

    ds = perturbed_example1(np.random.default_rng(0), n=4, T=4, d=12)
    W0s, _ = global_convergence.random_initialisations(np.random.default_rng(10), 12, 1, [scale])
    W_mm = max_margin.solve_w_svm(ds["X"], ds["opt"], name="test").W[None]
    spec = OptimizerSpec("polyak", f_star="opt")
    steps = 3  # the scale-100 start stops being finite at iteration 3

    def train(iterations, nonfinite):
        return dispatch.train(
            [ds], spec, W0s=W0s, W_mm=W_mm, iterations=iterations,
            log_iterations=np.arange(iterations + 1), only="study", nonfinite=nonfinite,
        )  # fmt: skip

    logged, _, _ = train(steps, "nan")
    assert np.isnan(logged["gap_W"][0, -1]) == leaves
    before, _, _ = train(steps - 1, "raise")  # finite up to the last step's start
    log_eta, log10_norm = _exact_polyak(ds, W0s[0], steps)
    np.testing.assert_allclose(before["log_step_W"][0, :-1], log_eta[:-1], rtol=1e-9)
    assert (log10_norm > 308.3) == leaves  # float64's largest number is 1.8e308
