"""Cost of one synthetic training step against its arithmetic floor, per experiment.

For every (experiment, optimizer) of a config (default: config/config.yaml; the sizes,
losses and optimizer settings are the config's), on seed 0's data:

  step      the compiled kernel (attnbias.training.kernel), one thread, float64: the median over
            rounds of (time of N steps) / N, metrics logged only at 0 and N
  logged    the same with the config's log grid (the metrics at ~100 logged iterations,
            computed in numpy): what a training job spends per iteration
  floor     the matrix products of one step done once each in numpy (medians of repeated
            calls), in two forms:
              A/Q   the products of the W = W0 + A Q form that the torch reference does
                    (W x_1 = W0 x_1 + A Gq, logits X (W x_1), x_bar = a X, v = w X, the
                    norm (dA^T dA) o Gq; with u trained also X u and x_bar^T w);
              token the products the kernel does: P c (and K e with u trained)
  torch     (--torch) the torch reference's step (attnbias.training.torch_loop), for the ratio

Targets (docs/speed.md): fig2's step <= 60 us; the two-token example (d = 2) <= 15 us; the step
under 10x the A/Q floor. Rounds interleave the cases in a random order, so machine noise
hits all alike.

Usage: python benchmarks/train_step.py [--config FILE] [--steps N] [--rounds R] [--torch]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from datetime import datetime, timezone

import numpy as np
import yaml

from attnbias.data import models
from attnbias.optim.spec import OptimizerSpec, without
from attnbias.svm import max_margin
from attnbias.training import kernel_library, loop, metrics
from attnbias.training.kernel import KernelStepper
from attnbias.training.token_problem import TokenProblem

TARGETS_US = {"fig2": 60.0, "gd_vs_ngd": 15.0}
FLOOR_RATIO_TARGET = 10.0


def median_time(fn, repeats: int, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return statistics.median(times)


class Case:
    def __init__(self, experiment: str, name: str, config: dict, steps: int):
        e = config["experiments"][experiment]
        self.label = f"{experiment}/{name}"
        self.experiment = experiment
        self.spec = OptimizerSpec(**without(e["optimizers"][name], "label"))
        self.train = e["train"]
        self.steps = steps
        self.ds = models.generate(e["data"]["model"], 0, e["data"]["params"])
        sol = max_margin.to_arrays(
            max_margin.solve_for_dataset(self.ds, self.train["train_u"], self.label)
        )
        self.W_mm = sol["W_mm"][None]
        self.u_mm = sol["u_mm"][None] if self.train["train_u"] else None
        self.problem = TokenProblem([self.ds])
        self.grid = metrics.log_grid(steps, self.train["log_points"], self.train["grid"])
        n, T, d = self.ds["X"].shape
        self.size = f"n={n} T={T} d={d}"

    def run(self, grid) -> None:
        loop.train(
            KernelStepper,
            self.problem,
            self.spec,
            iterations=self.steps,
            log_iterations=grid,
            W_mm=self.W_mm,
            u_mm=self.u_mm,
            train_u=self.train["train_u"],
            loss=self.train["loss"],
        )

    def floors(self, repeats: int) -> tuple[float, float]:
        """(A/Q floor, token floor) in seconds: each product once, medians of `repeats`."""
        X, u = self.ds["X"], self.ds.get("u", np.zeros(self.ds["X"].shape[-1]))
        n, T, d = X.shape
        rng = np.random.default_rng(0)
        Q = np.ascontiguousarray(X[:, 0])
        Gq, W0q = Q @ Q.T, Q @ self.ds["W0"].T
        A, wq = rng.standard_normal((d, n)), rng.standard_normal((n, d))
        a, w = rng.random((n, 1, T)), rng.random((n, 1, T))
        dA = rng.standard_normal((d, n))
        P, K = self.problem.P[0], self.problem.K[0]
        c = rng.standard_normal(n * T)
        products = [
            lambda: W0q + (A @ Gq).T,
            lambda: X @ wq[:, :, None],
            lambda: a @ X,
            lambda: w @ X,
            lambda: ((dA.T @ dA) * Gq).sum(),
        ]
        token = [lambda: P @ c]
        if self.train["train_u"]:
            products += [lambda: X @ u, lambda: w[:, 0, :1].T @ Q]
            token += [lambda: K @ c]
        aq = sum(median_time(p, repeats) for p in products)
        return aq, sum(median_time(p, repeats) for p in token)

    def torch_step(self, steps: int) -> float:
        import torch

        from attnbias.model import attention
        from attnbias.training.torch_loop import TorchStepper

        torch.set_num_threads(1)
        problem = attention.Problem.from_arrays([self.ds])
        start = time.perf_counter()
        loop.train(
            TorchStepper,
            problem,
            self.spec,
            iterations=steps,
            log_iterations=np.array([0, steps]),
            W_mm=torch.as_tensor(self.W_mm),
            u_mm=None if self.u_mm is None else torch.as_tensor(self.u_mm),
            train_u=self.train["train_u"],
            loss=self.train["loss"],
        )
        return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--steps", type=int, default=10_000, help="steps per timed run")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median)")
    parser.add_argument("--torch", action="store_true", help="also time the torch reference")
    args = parser.parse_args()
    config = yaml.safe_load(open(args.config))
    cases = [
        Case(name, opt, config, args.steps)
        for name, e in config["experiments"].items()
        for opt in e["optimizers"]
    ]
    print(
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {platform.node()}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
        f"kernel {kernel_library.kernel_path().name}"
    )
    for case in cases:
        case.run([0, args.steps])  # warm-up (and builds the kernel if needed)
    step = {c.label: [] for c in cases}
    logged = {c.label: [] for c in cases}
    for _ in range(args.rounds):
        random.shuffle(cases)
        for case in cases:
            start = time.perf_counter()
            case.run([0, args.steps])
            step[case.label].append((time.perf_counter() - start) / args.steps)
            start = time.perf_counter()
            case.run(case.grid)
            logged[case.label].append((time.perf_counter() - start) / args.steps)
    cases.sort(key=lambda c: c.label)
    header = f"{'case':22s} {'size':18s} {'step':>8s} {'logged':>8s} {'A/Q floor':>10s}"
    header += f" {'ratio':>6s} {'token floor':>12s} {'ratio':>6s}"
    print(header + (f" {'torch':>8s} {'speed-up':>9s}" if args.torch else ""))
    verdicts = []
    for case in cases:
        s, lg = statistics.median(step[case.label]), statistics.median(logged[case.label])
        aq, tok = case.floors(repeats=2000)
        line = (
            f"{case.label:22s} {case.size:18s} {s * 1e6:6.2f}us {lg * 1e6:6.2f}us "
            f"{aq * 1e6:8.2f}us {s / aq:6.2f} {tok * 1e6:10.2f}us {s / tok:6.2f}"
        )
        if args.torch:
            ref = case.torch_step(max(200, args.steps // 20))
            line += f" {ref * 1e6:6.0f}us {ref / s:8.0f}x"
        print(line)
        target = TARGETS_US.get(case.experiment)
        if target is not None:
            verdicts.append((f"{case.label} step <= {target:g} us", s * 1e6 <= target))
        verdicts.append((f"{case.label} step < {FLOOR_RATIO_TARGET:g}x A/Q floor", s / aq < 10))
    failed = [text for text, ok in verdicts if not ok]
    print(f"targets: {len(verdicts) - len(failed)} of {len(verdicts)} met")
    for text in failed:
        print(f"  NOT MET: {text}")


if __name__ == "__main__":
    main()
