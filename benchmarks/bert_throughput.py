"""BERT-base fine-tuning throughput on MNLI-shaped batches, in samples per second.

The target (issue: 10 epochs of MNLI in under an hour on one H200) is
392,702 pairs x 10 epochs / 3600 s = 1,091 samples/s. This times the training step that
`attnbias.realdata.trainer.fit` runs (bf16 autocast on CUDA, cross-entropy, optimizer
step) on a BERT-base-sized model: the pre-trained weights when `--model` names a local
folder or a cached hub name, else a randomly initialised model of the same architecture
(BertConfig's defaults: 12 layers, hidden 768), which costs the same per step.

Usage: python benchmarks/bert_throughput.py [--model PATH] [--optimizer sgd|sngd|sps|adam]
       [--batch 32] [--seq-len 128] [--steps 50] [--warmup 10] [--device auto|cpu|cuda]
"""

from __future__ import annotations

import argparse
import platform
import time

import torch
import torch.nn.functional as F

from attnbias.devices import resolve_device
from attnbias.realdata.trainer import _autocast
from attnbias.stochastic import SPS, make_optimizer

MNLI_TRAIN_PAIRS = 392_702
SETTINGS = {
    "sgd": {"lr": 1e-3},
    "sngd": {"lr": 1e-3},
    "sps": {"eta_max": 1e-3},
    "adam": {"lr": 2e-5},
}


def bert_model(path: str | None):
    from transformers import AutoModelForSequenceClassification, BertConfig

    if path:
        return AutoModelForSequenceClassification.from_pretrained(path, num_labels=3), path
    config = BertConfig(num_labels=3)  # bert-base-uncased's architecture
    return AutoModelForSequenceClassification.from_config(config), "random BERT-base"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--optimizer", default="sngd", choices=sorted(SETTINGS))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()

    device = resolve_device(args.device)
    model, name = bert_model(args.model)
    model.to(device).train()
    optimizer = make_optimizer(args.optimizer, model.parameters(), **SETTINGS[args.optimizer])
    generator = torch.Generator().manual_seed(0)
    batch = {
        "input_ids": torch.randint(1000, 30000, (args.batch, args.seq_len), generator=generator),
        "attention_mask": torch.ones(args.batch, args.seq_len, dtype=torch.int64),
        "token_type_ids": torch.zeros(args.batch, args.seq_len, dtype=torch.int64),
    }
    batch = {k: v.to(device) for k, v in batch.items()}
    labels = torch.randint(0, 3, (args.batch,), generator=generator).to(device)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with _autocast(device, True):
            logits = model(**batch).logits
        loss = F.cross_entropy(logits.float(), labels)
        loss.backward()
        optimizer.step(loss=loss.detach()) if isinstance(optimizer, SPS) else optimizer.step()

    for _ in range(args.warmup):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    rate = args.steps * args.batch / seconds
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()
    print(f"device: {device} ({where or platform.machine()}), torch {torch.__version__}")
    print(f"model: {name}; optimizer {args.optimizer}; batch {args.batch} x {args.seq_len} tokens")
    print(f"{rate:,.1f} samples/s over {args.steps} steps after {args.warmup} warm-up steps")
    hours = 10 * MNLI_TRAIN_PAIRS / rate / 3600
    print(f"10 epochs of MNLI ({MNLI_TRAIN_PAIRS:,} pairs) at this rate: {hours:,.2f} h")
    print("goal: under 1 h on one H200")


if __name__ == "__main__":
    main()
