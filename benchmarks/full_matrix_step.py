"""Cost of one step on the full W (attnbias.training.full_matrix) against its arithmetic
floor, per rule, at fig2's size (B = 10 runs, n = 20, T = 5, d = 100; Example 1).

  step    full_matrix.train of N steps, metrics logged at 0 and N only, divided by N
          (median over rounds); the 1 - cos(W_t, W_mm) crossing check runs every step
  floor   the matrix products of one step done once each in numpy (medians of repeated
          calls): the logits X (W x_1), x_bar = a X, the token sums w X, the gradient
          G = L Q, and the rule's own products (kq: G Q, G^T K, K Q^T; the spectral rules:
          L R^T and U V^T Qr^T, without their SVD of d x n)

Target (issue 43): step / floor <= 3. Rounds interleave the rules in a random order, so
machine noise hits all alike.

Usage: python benchmarks/full_matrix_step.py [--steps N] [--rounds R]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

from attnbias.data import models
from attnbias.optim.spec import OptimizerSpec
from attnbias.training import full_matrix
from attnbias.training.token_problem import TokenProblem

SIZE = dict(n=20, T=5, d=100)
RUNS = 10
TARGET = 3.0
SPECS = {
    "gd": OptimizerSpec("gd", lr=1.0),
    "ngd": OptimizerSpec("ngd", lr=0.1),
    "sign": OptimizerSpec("sign", lr=0.01),
    "nsd-l3": OptimizerSpec("nsd", lr=0.1, norm="l3"),
    "nsd-spectral": OptimizerSpec("nsd", lr=0.1, norm="spectral"),
    "muon": OptimizerSpec("muon", lr=0.1),
    "adam": OptimizerSpec("adam", lr=0.01),
    "mirror": OptimizerSpec("mirror", lr=1.0, p=3.0),
    "kq": OptimizerSpec("kq", lr=1.0),
}


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def floors(problem: TokenProblem, repeats: int = 200) -> dict[str, float]:
    """Seconds of each rule's products, done once (see the module doc)."""
    rng = np.random.default_rng(0)
    B, n, T, d = problem.B, problem.n, problem.T, problem.d
    X, Q = problem.X, problem.Q
    W, K, Kq = (rng.standard_normal((B, d, d)) for _ in range(3))
    a, w = rng.standard_normal((B, n, T)), rng.standard_normal((B, n, T))
    left, R = rng.standard_normal((B, d, n)), rng.standard_normal((B, n, n))
    U, Vt = rng.standard_normal((B, d, n)), rng.standard_normal((B, n, d))

    def common():
        Wq = Q @ np.swapaxes(W, 1, 2)
        _ = (X @ Wq[..., None])[..., 0]
        _ = (a[..., None, :] @ X)[..., 0, :]
        _ = (w[..., None, :] @ X)[..., 0, :]
        return left @ Q

    def kq():
        G = common()
        _ = G @ Kq, np.swapaxes(G, 1, 2) @ K, K @ np.swapaxes(Kq, 1, 2)

    def spectral():
        common()
        _ = left @ R, U @ Vt

    base = median_time(common, repeats)
    out = dict.fromkeys(SPECS, base)
    out["kq"] = median_time(kq, repeats)
    out["nsd-spectral"] = out["muon"] = median_time(spectral, repeats)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    datasets = [models.generate("example1", seed, SIZE) for seed in range(RUNS)]
    problem = TokenProblem(datasets)
    W_mm = np.eye(SIZE["d"])[None]  # never reached: the crossing check runs at every step
    grid = np.array([0, args.steps])
    times: dict[str, list[float]] = {name: [] for name in SPECS}
    order = list(SPECS)
    for _ in range(args.rounds):
        random.shuffle(order)
        for name in order:
            start = time.perf_counter()
            full_matrix.train(
                problem, SPECS[name], iterations=args.steps, log_iterations=grid, W_mm=W_mm
            )
            times[name].append((time.perf_counter() - start) / args.steps)
    floor = floors(problem)
    size = ", ".join(f"{k}={v}" for k, v in SIZE.items())
    print(f"fig2 size: B={RUNS}, {size}; target <= {TARGET:g}x (machine load: see uptime)")
    print(f"{'rule':14s} {'step us':>9s} {'floor us':>9s} {'ratio':>6s}")
    for name in SPECS:
        step = statistics.median(times[name])
        print(f"{name:14s} {step * 1e6:9.1f} {floor[name] * 1e6:9.1f} {step / floor[name]:6.2f}")


if __name__ == "__main__":
    main()
