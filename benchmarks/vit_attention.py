"""ViT-small's training forward and backward with its attention fused (F.scaled_dot_product_
attention) against the plain softmax(scores) @ v, in one process, interleaved in a random
order each round; medians of thread CPU time (which other jobs' load inflates less than
wall time) and of wall time.

Usage: python benchmarks/vit_attention.py [--batch 8] [--rounds 20] [--warmup 3]
       [--threads 1] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch
import torch.nn.functional as F

from attnbias.realdata.vit import LocalitySelfAttention, ViTSmall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    model = ViTSmall(image_size=32, channels=3, num_classes=10).to(device)
    images = torch.randn(args.batch, 3, 32, 32, device=device)
    labels = torch.randint(0, 10, (args.batch,), device=device)

    def step() -> None:
        model.zero_grad(set_to_none=True)
        F.cross_entropy(model(images), labels).backward()
        if device.type == "cuda":
            torch.cuda.synchronize()

    times = {True: [], False: []}
    order, rng = [True, False], random.Random(0)
    try:
        for r in range(args.warmup + args.rounds):
            rng.shuffle(order)
            for fused in order:
                LocalitySelfAttention.fused = fused
                cpu, wall = time.thread_time(), time.perf_counter()
                step()
                if r >= args.warmup:
                    times[fused].append((time.thread_time() - cpu, time.perf_counter() - wall))
    finally:
        LocalitySelfAttention.fused = True
    for fused in (False, True):
        cpu = statistics.median(c for c, _ in times[fused]) * 1e3
        wall = statistics.median(w for _, w in times[fused]) * 1e3
        name = "SDPA " if fused else "plain"
        print(f"ViT-small, batch {args.batch}, {name}: {cpu:.1f} ms CPU, {wall:.1f} ms wall")


if __name__ == "__main__":
    main()
