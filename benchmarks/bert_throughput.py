"""BERT fine-tuning throughput on MNLI-shaped or real-text batches, in samples per second,
and the FLOP/s it implies against the same step's GEMMs timed alone in the same run.

The target (10 epochs of MNLI in under 27 min on one H100) is
392,702 pairs x 10 epochs / 1620 s = 2,424 samples/s. This times the training step that
`attnbias.realdata.trainer.fit` runs, through fit's own pieces: the batch taken from the
training tensors, collated and copied (pinned memory on CUDA), the closure (bf16 autocast
on CUDA, cross-entropy) and the optimizer step. The model: the pre-trained weights when
`--model` names a local folder or a cached hub name, else a randomly initialised BERT of
`--size` (base: BertConfig's defaults, 12 layers, hidden 768, which costs what the
pre-trained one does; tiny: 2 layers, hidden 32, for CPU profiles).

Sequence lengths: `--lengths full` fills every row to --seq-len (the worst case);
`--lengths mnli` draws MNLI-like pair lengths (log-normal, median 36 tokens, about 5% over
70, at least 8, cut at --seq-len: an assumption standing in for the real length
distribution, which this machine has no copy of) and pads them to --seq-len, and
`--padding dynamic` (fit's) trims each batch to its longest row where `fixed` keeps all
--seq-len columns. `--buckets K` takes the batches in fit's length-bucketed order
(`train.length_buckets: K`, off by default), so a batch's rows have alike lengths.

`--texts rotten_tomatoes|sms_spam` takes the row lengths from the real corpus (tokenized by
the model's tokenizer; `--data-root`, where check_real_data extracted it) instead.

The floor: a training step's work is almost all GEMMs (each linear layer's forward product,
and its two backward products, dX = dY W^T and dW = X^T dY). `--gemm` times exactly those
products, at the step's mean token count, one after another with nothing else, and reports
the FLOP/s they reach; the step's FLOP/s (6 x the non-embedding parameters x tokens, plus
the attention's QK^T and AV over the trimmed columns) over it says how near the floor the
whole step runs (docs/speed.md).

Usage: python benchmarks/bert_throughput.py [--model PATH] [--size base|minilm|tiny]
       [--optimizer sgd|sngd|sps|adam] [--batch 32] [--seq-len 128] [--lengths full|mnli]
       [--padding dynamic|fixed] [--buckets 0] [--steps 50] [--warmup 10] [--threads T] [--compile]
       [--device auto|cpu|cuda] [--texts DATASET] [--data-root data] [--gemm]
       [--attention sdpa|eager]
       [--attention sdpa|eager]
"""

from __future__ import annotations

import argparse
import platform
import time
from functools import partial
from pathlib import Path

import torch

from attnbias.optim.stochastic import make_optimizer
from attnbias.realdata import pinned, sample_order, trainer
from attnbias.realdata.bert import ATTENTION, trim_padding
from attnbias.training.devices import resolve_device

MNLI_TRAIN_PAIRS = 392_702
GOAL_SECONDS = 27 * 60  # 10 epochs
SETTINGS = {
    "sgd": {"lr": 1e-3},
    "sngd": {"lr": 1e-3},
    "sps": {"eta_max": 1e-3},
    "adam": {"lr": 2e-5},
}
SIZES = {
    "base": {},  # bert-base-uncased's architecture
    "tiny": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    # all-MiniLM-L6-v2's architecture (attnbias.realdata.pinned.MINILM)
    "minilm": dict(
        hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536
    ),
}
MNLI_MEDIAN, MNLI_SIGMA, MIN_LENGTH = 36, 0.4, 8  # exp(0.4 * 1.645) * 36 = 70 at the 95th pct


def bert_model(path: str | None, size: str, attention: str):
    from transformers import AutoModelForSequenceClassification, BertConfig

    if path:
        model = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=3, attn_implementation=attention
        )
        return model, path
    config = BertConfig(num_labels=3, attn_implementation=attention, **SIZES[size])
    return AutoModelForSequenceClassification.from_config(config), f"random BERT-{size}"


def row_lengths(kind: str, n: int, seq_len: int, generator: torch.Generator) -> torch.Tensor:
    if kind == "full":
        return torch.full((n,), seq_len)
    normal = torch.randn(n, generator=generator, dtype=torch.float64)
    lengths = (MNLI_MEDIAN * torch.exp(MNLI_SIGMA * normal)).round().long()
    return lengths.clamp(MIN_LENGTH, seq_len)


def corpus_lengths(dataset: str, data_root: str, tokenizer_path: str, n: int, seq_len: int,
                   generator: torch.Generator) -> torch.Tensor:  # fmt: skip
    """n token counts drawn from a packaged corpus' texts, as its figure tokenizes them."""
    from transformers import AutoTokenizer

    from attnbias.realdata import packaged_text

    texts, _, _ = packaged_text.read(dataset, data_root)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
    counts = torch.tensor([len(ids) for ids in tokenizer(texts)["input_ids"]])
    return counts[torch.randint(len(counts), (n,), generator=generator)].clamp(max=seq_len)


def linear_shapes(model) -> list[tuple[int, int]]:
    """(in, out) of every linear layer of the encoder and head (the GEMMs of a step)."""
    return [(m.in_features, m.out_features) for m in model.modules()
            if isinstance(m, torch.nn.Linear)]  # fmt: skip


def step_flops(model, batches: list[trainer.Batch]) -> float:
    """Training FLOPs of the timed steps: 2 x 3 per multiply-add of every linear layer
    (forward, and the backward's two products) on each kept token column, plus the
    attention's QK^T and AV (2 x 2 x columns^2 x hidden a layer, times 3)."""
    config = model.config
    linear = sum(i * o for i, o in linear_shapes(model))
    flops = 0.0
    for batch in batches:
        rows, columns = batch["input_ids"].shape
        flops += 6 * linear * rows * columns
        flops += 3 * 4 * rows * columns**2 * config.hidden_size * config.num_hidden_layers
    return flops


def gemm_seconds(model, tokens: int, device: torch.device, repeats: int) -> tuple[float, float]:
    """(seconds, FLOPs) of one step's GEMMs alone: for each linear layer of the model, Y = X W,
    dX = dY W^T and dW = X^T dY at `tokens` rows, in float32, `repeats` times (the best)."""
    shapes = linear_shapes(model)
    operands = [
        (torch.randn(tokens, i, device=device), torch.randn(i, o, device=device),
         torch.randn(tokens, o, device=device))
        for i, o in shapes
    ]  # fmt: skip

    def once():
        for x, w, dy in operands:
            x @ w, dy @ w.T, x.T @ dy

    once()
    best = float("inf")
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        once()
        if device.type == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best, 6.0 * tokens * sum(i * o for i, o in shapes)


def training_data(n: int, seq_len: int, lengths: torch.Tensor, generator) -> trainer.Batch:
    """n rows padded at the end to seq_len, as `bert.tokenize_split` gives them."""
    mask = (torch.arange(seq_len)[None] < lengths[:, None]).long()
    ids = torch.randint(1000, 30000, (n, seq_len), generator=generator) * mask
    return {
        "input_ids": ids,
        "attention_mask": mask,
        "token_type_ids": (torch.arange(seq_len)[None] >= lengths[:, None] // 2).long() * mask,
        "labels": torch.randint(0, 3, (n,), generator=generator),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--size", default="base", choices=sorted(SIZES))
    parser.add_argument("--optimizer", default="sngd", choices=sorted(SETTINGS))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--lengths", default="full", choices=["full", "mnli"])
    parser.add_argument("--padding", default="dynamic", choices=["dynamic", "fixed"])
    parser.add_argument("--buckets", type=int, default=0, help="as train.length_buckets")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's)")
    parser.add_argument("--compile", action="store_true", help="as real_data.compile: true")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--texts", default=None, help="row lengths from this packaged corpus")
    parser.add_argument("--data-root", default="data")
    parser.add_argument("--gemm", action="store_true", help="time the step's GEMMs alone")
    parser.add_argument("--attention", default=ATTENTION, choices=["sdpa", "eager"])
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    device = resolve_device(args.device)
    model, name = bert_model(args.model, args.size, args.attention)
    model.to(device).train()
    optimizer = make_optimizer(args.optimizer, model.parameters(), **SETTINGS[args.optimizer])
    generator = torch.Generator().manual_seed(0)
    n = args.batch * (args.warmup + args.steps)  # a fresh batch every step, as in training
    if args.texts:
        tokenizer = args.model or str(Path(args.data_root) / pinned.MINILM.folder)
        lengths = corpus_lengths(args.texts, args.data_root, tokenizer, n, args.seq_len, generator)
    else:
        lengths = row_lengths(args.lengths, n, args.seq_len, generator)
    task = trainer.Task(
        model=model,
        train=training_data(n, args.seq_len, lengths, generator),
        test={},
        logits=lambda m, batch: m(**batch).logits,
        collate=trim_padding if args.padding == "dynamic" else None,
    )
    schedule = trainer.Schedule(epochs=1, batch_size=args.batch, log_every=1)
    order = (
        sample_order.bucketed_order(0, 0, lengths, args.batch, args.buckets)
        if args.buckets
        else torch.arange(n)
    )
    forward = torch.compile(model, mode=trainer.COMPILE_MODE) if args.compile else model
    columns, batches = [], []

    def step(i: int) -> torch.Tensor:
        rows = order[i * args.batch : (i + 1) * args.batch]
        batch = trainer._batch(task, task.train, rows, device)
        columns.append(batch["input_ids"].shape[1])
        batches.append(batch)
        closure = partial(trainer._loss_and_gradient, task, forward, optimizer, batch, schedule)
        return optimizer.step(closure)

    for i in range(args.warmup):
        step(i)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(args.warmup, args.warmup + args.steps):
        loss = step(i)
    float(loss)  # the device has finished every step
    seconds = time.perf_counter() - start
    rate = args.steps * args.batch / seconds
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()
    print(f"device: {device} ({where or platform.machine()}), torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")  # fmt: skip
    timed = columns[args.warmup :]
    print(
        f"model: {name}; optimizer {args.optimizer}; batch {args.batch} x {args.seq_len} tokens, "
        f"lengths {args.texts or args.lengths} (mean {lengths.double().mean():.1f} tokens), "
        "padding "
        f"{args.padding} (mean {sum(timed) / len(timed):.1f} columns per batch)"
        + (f", length buckets of {args.buckets} batches" if args.buckets else "")
        + ("; torch.compile" if args.compile else "")
        + f"; attention {args.attention}"
    )
    print(f"{rate:,.1f} samples/s over {args.steps} steps after {args.warmup} warm-up steps")
    flops = step_flops(model, batches[args.warmup :])
    print(
        f"step: {flops / seconds / 1e9:,.1f} GFLOP/s ({flops / args.steps / 1e9:,.1f} GFLOP a step)"
    )
    if args.gemm:
        tokens = round(args.batch * sum(timed) / len(timed))
        gemm, gemm_flops = gemm_seconds(model, tokens, device, repeats=5)
        ratio = (flops / seconds) / (gemm_flops / gemm)
        print(f"the step's GEMMs alone ({tokens} tokens): {gemm_flops / gemm / 1e9:,.1f} GFLOP/s; "
              f"the step runs at {ratio:.2f} of that")  # fmt: skip
    minutes = 10 * MNLI_TRAIN_PAIRS / rate / 60
    print(f"10 epochs of MNLI ({MNLI_TRAIN_PAIRS:,} pairs) at this rate: {minutes:,.1f} min")
    print(f"goal (BERT-base on one H100): under {GOAL_SECONDS // 60} min")


if __name__ == "__main__":
    main()
