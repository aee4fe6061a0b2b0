"""Cost of one step on the full W (attnbias.training.full_matrix) against its arithmetic
floor, per rule, at fig2's size (B = 10 runs, n = 20, T = 5, d = 100; Example 1).

  step    loop.train on FullMatrixStepper, N steps, metrics logged at 0 and N only, / N
          (median over rounds); the 1 - cos(W_t, W_mm) crossing check runs every step
  floor   the same step written plainly, each operation once in numpy (median of
          repeated calls): the products every rule does (the logits X (W x_1), x_bar = a X,
          the token sums w X, the gradient G = L Q) and the rule's own arithmetic (the
          sign, the l_3 dual map, the SVD of d x n of the spectral rules, Adam's moments,
          the mirror map, kq's G Q, G^T K, K Q^T), with none of our bookkeeping (scales in
          logs, zero blocks, the crossing check)

Target (docs/speed.md): step / floor <= 3. Rounds interleave the rules in a random order, so
machine noise hits all alike. --clock cpu times both by the process's CPU time (one BLAS
thread: fairer than the wall clock on a machine that other work shares).

Usage: python benchmarks/full_matrix_step.py [--steps N] [--rounds R] [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits  # scikit-learn's dependency
from train_step import median_time  # (run as a script: benchmarks/ is on the path)

from attnbias.data import models
from attnbias.optim.spec import OptimizerSpec
from attnbias.training import loop
from attnbias.training.full_matrix import FullMatrixStepper
from attnbias.training.token_problem import TokenProblem

SIZE = dict(n=20, T=5, d=100)
RUNS = 10
TARGET = 3.0
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
SPECS = {
    "gd": OptimizerSpec("gd", lr=1.0),
    "ngd": OptimizerSpec("ngd", lr=0.1),
    "sign": OptimizerSpec("sign", lr=0.01),
    "nsd-max": OptimizerSpec("nsd", lr=0.03, norm="max", schedule="sqrt"),  # sign's floor
    "nsd-l3": OptimizerSpec("nsd", lr=0.1, norm="l3"),
    "nsd-spectral": OptimizerSpec("nsd", lr=0.1, norm="spectral"),
    "muon": OptimizerSpec("muon", lr=0.1),
    "adam": OptimizerSpec("adam", lr=0.01),
    "mirror": OptimizerSpec("mirror", lr=1.0, p=3.0),
    "kq": OptimizerSpec("kq", lr=1.0),
}


def floors(problem: TokenProblem, repeats: int = 100, clock=time.perf_counter) -> dict[str, float]:
    """Seconds of each rule's step written plainly and done once in numpy (module doc)."""
    rng = np.random.default_rng(0)
    B, n, T, d = problem.B, problem.n, problem.T, problem.d
    X, Q = problem.X, problem.Q
    W, K, Kq, m, v = (rng.standard_normal((B, d, d)) for _ in range(5))
    v = v * v  # a second moment
    a, w = rng.standard_normal((B, n, T)), rng.standard_normal((B, n, T))
    left, R = rng.standard_normal((B, d, n)), rng.standard_normal((B, n, n))
    Qr = rng.standard_normal((B, d, n))
    lr = 0.1

    def products():  # every rule's: the logits, x_bar, the token sums, G = L Q
        Wq = Q @ np.swapaxes(W, 1, 2)
        _ = (X @ Wq[..., None])[..., 0]
        _ = (a[..., None, :] @ X)[..., 0, :]
        _ = (w[..., None, :] @ X)[..., 0, :]
        return left @ Q

    def gd():
        return W - lr * products()

    def ngd():
        G = products()
        return W - lr / np.sqrt(np.sum(G * G, axis=(1, 2)))[:, None, None] * G

    def sign():
        return W - lr * np.sign(products())

    def nsd_l3():  # q = 3/2: |G|^(q-1) is a square root, |G|^q = |G| |G|^(1/2)
        G = products()
        a = np.abs(G)
        root = np.sqrt(a)
        norm = np.sum(a * root, axis=(1, 2)) ** (1 / 3)
        return W - lr * np.sign(G) * root / norm[:, None, None]

    def spectral():  # U V^T of L Q through the thin QR of Q^T (geometry.QueryBasis.polar)
        products()
        U, _, Vt = np.linalg.svd(left @ np.swapaxes(R, 1, 2), full_matrices=False)
        return W - lr * (U @ (Vt @ np.swapaxes(Qr, 1, 2)))

    def muon():
        M = 0.9 * left + left
        products()
        U, _, Vt = np.linalg.svd(M @ np.swapaxes(R, 1, 2), full_matrices=False)
        return W - lr * (U @ (Vt @ np.swapaxes(Qr, 1, 2)))

    def adam():
        G = products()
        m1 = 0.9 * m + 0.1 * G
        v1 = 0.999 * v + 0.001 * G * G  # (bias corrections: per-run scalars, left out)
        return W - lr * m1 / (np.sqrt(v1) + 1e-8)

    def mirror():  # p = 3: Z = sign(W) W^2, W = sign(Z) |Z|^(1/2)
        Z = m - lr * products()
        return np.sign(Z) * np.abs(Z) ** 0.5

    def kq():
        G = products()
        K1, Q1 = K - lr * G @ Kq, Kq - lr * np.swapaxes(G, 1, 2) @ K
        return K1 @ np.swapaxes(Q1, 1, 2)

    plain = {"gd": gd, "ngd": ngd, "sign": sign, "nsd-max": sign, "nsd-l3": nsd_l3,
             "nsd-spectral": spectral, "muon": muon, "adam": adam, "mirror": mirror,
             "kq": kq}  # fmt: skip
    return {name: median_time(fn, repeats, clock) for name, fn in plain.items()}


def main() -> None:
    # one BLAS thread, as a training job gets (Snakemake sets OMP_NUM_THREADS and the like to
    # the job's threads): on a loaded machine BLAS's own threads cost up to 100x on the
    # (B, d, d) products (measured: 155 ms against 0.5 ms for one product)
    with threadpool_limits(limits=1):
        _measure()


def _measure() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    datasets = [models.generate("example1", seed, SIZE) for seed in range(RUNS)]
    problem = TokenProblem(datasets)
    W_mm = np.eye(SIZE["d"])[None]  # never reached: the crossing check runs at every step
    grid = np.array([0, args.steps])
    times: dict[str, list[float]] = {name: [] for name in SPECS}
    order = list(SPECS)
    for _ in range(args.rounds):
        random.shuffle(order)
        for name in order:
            start = clock()
            loop.train(
                FullMatrixStepper,
                problem,
                SPECS[name],
                iterations=args.steps,
                log_iterations=grid,
                W_mm=W_mm,
            )
            times[name].append((clock() - start) / args.steps)
    floor = floors(problem, clock=clock)
    size = ", ".join(f"{k}={v}" for k, v in SIZE.items())
    print(f"fig2 size: B={RUNS}, {size}; {args.clock} time; target <= {TARGET:g}x (load: uptime)")
    print(f"{'rule':14s} {'step us':>9s} {'floor us':>9s} {'ratio':>6s}")
    for name in SPECS:
        step = statistics.median(times[name])
        print(f"{name:14s} {step * 1e6:9.1f} {floor[name] * 1e6:9.1f} {step / floor[name]:6.2f}")


if __name__ == "__main__":
    main()
