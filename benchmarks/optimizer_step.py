"""Per-step cost of SNGD and SPS against SGD (and Adam), on the same model and batch.

One training step = forward + backward + optimizer step, timed on:
  vit   ViT-small (Lee et al. defaults: dim 192, depth 9, 12 heads) on a CIFAR-sized batch
  bert  a tiny randomly initialised BERT (hidden 32, 2 layers) for sequence classification

Every optimizer trains its own copy of the model from the same initialisation, on the
same batch. After a warm-up, the optimizers take turns, one step each per round, in a
fresh random order each round, so machine noise hits all of them alike; the medians over
the rounds are compared. Step sizes are small (SPS's cap binds), so no run drifts into
overflow or denormals, which would change the cost of the arithmetic.

Target: SNGD and SPS within 5% of SGD per step. On a loaded machine the whole-step medians
wander by several percent; the optimizer step's own extra time over SGD's, as a fraction of
SGD's whole step, is printed too and is the steadier measure of the overhead.

Usage: python benchmarks/optimizer_step.py [--rounds N] [--warmup N] [--vit-batch B]
       [--bert-batch B] [--seq-len L] [--threads T (default 1)] [--device cpu|cuda]
       [--models vit bert]
"""

from __future__ import annotations

import argparse
import copy
import platform
import random
import statistics
import time

import torch

from attnbias.optim.stochastic import SPS, make_optimizer
from attnbias.realdata.vit import ViTSmall

OPTIMIZERS = {
    "sgd": {"lr": 1e-3},
    "sngd": {"lr": 1e-3},
    "sps": {"eta_max": 1e-3},
    "adam": {"lr": 1e-4},
}


def vit_case(batch: int, device):
    model = ViTSmall(image_size=32, channels=3, num_classes=10)
    images = torch.randn(batch, 3, 32, 32, device=device)
    labels = torch.randint(0, 10, (batch,), device=device)
    loss_fn = torch.nn.CrossEntropyLoss()
    return model.to(device), lambda m: loss_fn(m(images), labels)


def bert_case(batch: int, seq_len: int, device):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=1000,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max(seq_len, 16),
        num_labels=3,
    )
    model = BertForSequenceClassification(config)
    ids = torch.randint(0, 1000, (batch, seq_len), device=device)
    labels = torch.randint(0, 3, (batch,), device=device)
    return model.to(device), lambda m: m(input_ids=ids, labels=labels).loss


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def one_step(model, opt, loss_of, device) -> tuple[float, float]:
    """(seconds for forward + backward + step, seconds for the step alone)."""
    sync(device)
    start = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = loss_of(model)
    loss.backward()
    sync(device)
    mid = time.perf_counter()
    if isinstance(opt, SPS):
        opt.step(loss=loss)
    else:
        opt.step()
    sync(device)
    end = time.perf_counter()
    return end - start, end - mid


def bench(name: str, model, loss_of, rounds: int, warmup: int, device) -> None:
    model.train()
    runs = {}
    for opt_name, settings in OPTIMIZERS.items():
        m = copy.deepcopy(model)
        runs[opt_name] = (m, make_optimizer(opt_name, m.parameters(), **settings))
    total = {k: [] for k in runs}
    step = {k: [] for k in runs}
    order = list(runs)
    rng = random.Random(0)
    for r in range(warmup + rounds):
        rng.shuffle(order)
        for opt_name in order:
            m, opt = runs[opt_name]
            t_all, t_step = one_step(m, opt, loss_of, device)
            if r >= warmup:
                total[opt_name].append(t_all)
                step[opt_name].append(t_step)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"\n{name}: {n_params:,} parameters, {rounds} rounds after {warmup} warm-up")
    base = statistics.median(total["sgd"])
    base_step = statistics.median(step["sgd"])
    print(f"  {'optimizer':9s} {'step ms':>9s} {'vs SGD':>7s} {'opt.step ms':>12s} {'vs SGD':>7s}")
    for opt_name in runs:
        med, med_step = statistics.median(total[opt_name]), statistics.median(step[opt_name])
        q1, _, q3 = statistics.quantiles(total[opt_name], n=4)
        print(
            f"  {opt_name:9s} {med * 1e3:9.2f} {med / base:7.3f} {med_step * 1e3:12.3f} "
            f"{med_step / base_step:7.2f}   (whole step IQR {q1 * 1e3:.2f}-{q3 * 1e3:.2f} ms)"
        )
    for opt_name in ("sngd", "sps"):
        ratio = statistics.median(total[opt_name]) / base
        verdict = "within" if ratio <= 1.05 else "OVER"
        # the optimizer's own extra time, relative to SGD's whole step: robust to the noise
        # in forward and backward, which both optimizers share
        extra = statistics.median(step[opt_name]) - base_step
        print(
            f"  {opt_name}: {ratio:.3f}x SGD per step, {verdict} the 5% target; its step "
            f"costs {extra * 1e3:+.2f} ms over SGD's = {extra / base:+.2%} of SGD's whole step"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--vit-batch", type=int, default=32)
    parser.add_argument("--bert-batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    # one thread: on this shared 2-core machine two threads spin against other jobs
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--models", nargs="+", default=["vit", "bert"], choices=["vit", "bert"])
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else cpu
    print(
        f"torch {torch.__version__}, {args.device} ({where}), "
        f"{torch.get_num_threads()} threads, python {platform.python_version()}"
    )
    if "vit" in args.models:
        model, loss_of = vit_case(args.vit_batch, device)
        bench(
            f"ViT-small, batch {args.vit_batch} x 3x32x32",
            model,
            loss_of,
            args.rounds,
            args.warmup,
            device,
        )
    if "bert" in args.models:
        model, loss_of = bert_case(args.bert_batch, args.seq_len, device)
        label = f"tiny BERT (hidden 32, 2 layers), batch {args.bert_batch} x {args.seq_len} tokens"
        bench(label, model, loss_of, args.rounds, args.warmup, device)


if __name__ == "__main__":
    main()
