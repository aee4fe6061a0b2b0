"""The mini-batch training loop of the real-data figures, with checkpoint and resume.

One loop for every model (BERT, ViT-small): a `Task` says how a batch becomes logits and
what else to log; the loop owns batching, the optimizer step, logging, checkpoints and
the progress bar. Every step's mini-batch loss is kept (it is computed anyway) and, at the
log points, the loss on a fixed probe subset of the training set (sample_order.probe_subset),
so that races read the same samples for every run. A restarted run resumes from its last
checkpoint and logs exactly what an uninterrupted run logs: the checkpoint holds the model,
the optimizer state, the step, every random state and every step's loss so far, and the
batch order of an epoch is a pure function of (seed, epoch), whatever the optimizer: the
optimizers of a seed see the same batches (paired races). The checkpoint file and random states are
attnbias.realdata.checkpoints; the epochs' sample orders, attnbias.realdata.sample_order.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from attnbias.optim.cap_count import CapCount
from attnbias.realdata.checkpoints import load_checkpoint, rng_state, save_checkpoint, set_rng_state
from attnbias.realdata.metric_names import BATCH_LOSS, PROBE_METRIC
from attnbias.realdata.sample_order import bucketed_order, epoch_order, probe_subset

log = logging.getLogger(__name__)

Batch = dict[str, torch.Tensor]
# inductor's autotuned kernels; no CUDA graphs, which dynamic padding's shapes would defeat
COMPILE_MODE = "max-autotune-no-cudagraphs"


@dataclass
class Task:
    """What the loop needs to know about one experiment.

    train, test: dicts of equally long tensors, one of them "labels".
    logits: (model, batch without labels) -> class logits.
    evaluate_extra: (predictions, labels) on the test set -> further metrics (e.g. WILDS'
      worst-group accuracy), or None.
    model_metrics: model -> metrics of the parameters (e.g. per-layer norms), or None.
    """

    model: torch.nn.Module
    train: Batch
    test: Batch
    logits: Callable[[torch.nn.Module, Batch], torch.Tensor]
    evaluate_extra: Callable[[torch.Tensor, torch.Tensor], dict[str, float]] | None = None
    model_metrics: Callable[[torch.nn.Module], dict[str, float]] | None = None
    collate: Callable[[Batch], Batch] | None = None  # e.g. trims a text batch's padding


@dataclass
class Schedule:
    """How long to train and how often to log, evaluate and checkpoint (in steps)."""

    epochs: int
    batch_size: int
    log_every: int
    checkpoint_every: int = 0  # 0: no checkpoints
    eval_batch_size: int = 256
    seed: int = 0
    autocast: bool = True  # bf16 autocast where the device is CUDA
    length_buckets: int = 0  # >0: batches of alike lengths, sorted in pools of this many
    progress: bool = True
    progress_file: object = None  # where the bar goes (a job's log file); None: stderr
    compile: bool = False  # torch.compile the model (COMPILE_MODE) for its forward passes
    probe_samples: int = 0  # >0: the probe loss on this many fixed training samples, logged


def _size(data: Batch) -> int:
    return len(data["labels"])


def steps_per_epoch(task: Task, schedule: Schedule) -> int:
    n = _size(task.train)
    if n < schedule.batch_size:
        raise ValueError(
            f"the training set has {n} samples, fewer than one batch "
            f"(batch_size={schedule.batch_size})"
        )
    return n // schedule.batch_size  # the last partial batch is dropped: equal-sized steps


class _EpochOrders:
    """The sample order of each epoch, computed once per epoch (a permutation of MNLI's
    392,702 pairs takes milliseconds, which a GPU step cannot spare)."""

    def __init__(self, task: Task, schedule: Schedule):
        self.schedule, self.n = schedule, _size(task.train)
        self.lengths = None
        if schedule.length_buckets:
            if "attention_mask" not in task.train:
                raise ValueError("length_buckets needs text batches (an attention_mask)")
            self.lengths = task.train["attention_mask"].sum(dim=1)
        self.epoch, self.order = None, None

    def __getitem__(self, epoch: int) -> torch.Tensor:
        if epoch != self.epoch:
            s = self.schedule
            self.epoch, self.order = (
                epoch,
                (
                    epoch_order(s.seed, epoch, self.n)
                    if self.lengths is None
                    else bucketed_order(s.seed, epoch, self.lengths, s.batch_size, s.length_buckets)
                ),
            )
        return self.order


def _to(batch: Batch, device: torch.device) -> Batch:
    """The batch on `device`. To CUDA through pinned memory, so the copy runs beside the
    device's work instead of stopping the host until it is done."""
    if device.type == "cuda":
        batch = {k: v.pin_memory() if v.device.type == "cpu" else v for k, v in batch.items()}
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def _batch(task: Task, data: Batch, index, device: torch.device) -> Batch:
    """Rows `index` (a slice or an index tensor) of `data`, collated, on `device`."""
    batch = {k: v[index] for k, v in data.items()}
    return _to(task.collate(batch) if task.collate is not None else batch, device)


def _inputs(batch: Batch) -> Batch:
    return {k: v for k, v in batch.items() if k != "labels"}


def _autocast(device: torch.device, enabled: bool):
    if enabled and device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _loss_and_gradient(
    task: Task, forward: torch.nn.Module, optimizer, batch: Batch, schedule: Schedule
) -> torch.Tensor:
    """A step's closure: zero the gradients, the mini-batch loss, its gradient. The loss is
    returned detached and stays on the device: nothing here waits for the device.
    `forward`: the model, or its compiled form (the same parameters)."""
    optimizer.zero_grad(set_to_none=True)
    with _autocast(batch["labels"].device, schedule.autocast):
        logits = task.logits(forward, _inputs(batch))
    loss = F.cross_entropy(logits.float(), batch["labels"])
    loss.backward()
    return loss.detach()


class StepLosses:
    """Every step's mini-batch loss. A step's loss stays on the device (a list of 0-d
    tensors) until the next log point or checkpoint, which reads the pending ones to the host
    at once: the one place a step's loss reaches the host. `values` holds every step's loss
    read so far (float64), in step order; the log window is `values[window_start:]`."""

    def __init__(self, values: list[float] | None = None, window_start: int = 0):
        self.values = list(values or [])
        self.window_start = window_start  # the step the window starts at
        self.pending: list[torch.Tensor] = []

    def add(self, loss: torch.Tensor) -> None:
        self.pending.append(loss)

    def read(self) -> list[float]:
        """Every step's loss so far, as floats; FloatingPointError if a loss read now is not
        finite (naming the steps since the last read)."""
        if self.pending:
            first = len(self.values)
            new = torch.stack(self.pending).double().cpu().numpy()
            self.pending.clear()
            self.values.extend(new.tolist())
            if not np.isfinite(new).all():
                raise FloatingPointError(
                    f"the training loss is not finite at a step from {first} to "
                    f"{len(self.values) - 1}"
                )
        return self.values

    def window_mean(self) -> float:
        """The mean mini-batch loss since the last log point (Python's float sum); NaN if
        none."""
        window = self.read()[self.window_start :]
        return sum(window) / len(window) if window else np.nan

    def window_count(self) -> int:
        return len(self.values) + len(self.pending) - self.window_start

    def reset(self) -> None:
        self.read()
        self.window_start = len(self.values)


@torch.no_grad()
def evaluate(
    task: Task, device: torch.device, schedule: Schedule, forward: torch.nn.Module | None = None
) -> dict[str, float]:
    """Test accuracy (and the task's extra metrics) over the whole test set; `forward`: the
    model (default) or its compiled form."""
    forward = task.model if forward is None else forward
    was_training = task.model.training
    task.model.eval()
    predictions = []
    n = _size(task.test)
    for start in range(0, n, schedule.eval_batch_size):
        batch = _batch(task, task.test, slice(start, start + schedule.eval_batch_size), device)
        with _autocast(device, schedule.autocast):
            predictions.append(task.logits(forward, _inputs(batch)).argmax(-1).cpu())
    task.model.train(was_training)
    predicted = torch.cat(predictions)
    labels = task.test["labels"]
    results = {"test_accuracy": float((predicted == labels).double().mean())}
    if task.evaluate_extra is not None:
        results.update(task.evaluate_extra(predicted, labels))
    return results


def _probe(task: Task, schedule: Schedule) -> Batch | None:
    """The fixed probe subset of the training set (sample_order.probe_subset), or None. Text
    is taken in order of length, as the test set is, so that dynamic padding pads little
    (a sum of per-sample losses: the order changes no loss)."""
    if not schedule.probe_samples:
        return None
    index = probe_subset(_size(task.train), schedule.probe_samples)
    if "attention_mask" in task.train:
        lengths = task.train["attention_mask"][index].sum(dim=1)
        index = index[torch.argsort(lengths, stable=True)]
    return {k: v[index] for k, v in task.train.items()}


@torch.no_grad()
def probe_loss(
    task: Task, probe: Batch, device: torch.device, schedule: Schedule, forward: torch.nn.Module
) -> float:
    """The mean cross-entropy on `probe`, in eval mode (no dropout, no random draw: the run
    it is read from is unchanged), summed in float64."""
    was_training = task.model.training
    task.model.eval()
    total, n = 0.0, _size(probe)
    for start in range(0, n, schedule.eval_batch_size):
        batch = _batch(task, probe, slice(start, start + schedule.eval_batch_size), device)
        with _autocast(device, schedule.autocast):
            logits = task.logits(forward, _inputs(batch))
        loss = F.cross_entropy(logits.float(), batch["labels"], reduction="sum")
        total += float(loss.double())
    task.model.train(was_training)
    return total / n


def fit(
    task: Task,
    optimizer: torch.optim.Optimizer,
    schedule: Schedule,
    *,
    device: torch.device,
    checkpoint: str | Path | None = None,
    fingerprint: dict | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Train for `schedule.epochs` epochs; return (logged steps, {metric: values}).

    Logged at step 0, every `log_every` steps and at the end: train_loss (the mean
    mini-batch loss since the previous log point; NaN at step 0), test accuracy, the
    task's extra metrics, the model metrics, PROBE_METRIC where `schedule.probe_samples`
    (the mean loss, in eval mode, on the fixed probe subset of the training set); for an
    optimizer with a cap (SNGD, SPS: attnbias.optim.cap_count), cap_bound_share: the share
    of the steps since the previous log point at which the cap bound (NaN at step 0). With
    `checkpoint`, the state is saved every `checkpoint_every` steps and a run restarts
    from it; the file is removed once the run is complete. Besides the log points'
    metrics, BATCH_LOSS: every step's mini-batch loss, entry s the loss of the batch of
    step s + 1 at the parameters after s steps (its own length, `total`; `every_step` lays
    both out on the run's iterations).
    """
    model = task.model.to(device)
    model.train()
    per_epoch = steps_per_epoch(task, schedule)
    total = schedule.epochs * per_epoch
    fingerprint = {"total_steps": total, **(fingerprint or {})}
    probe = _probe(task, schedule)
    # cap_bound_at_log: the optimizer's count of cap-bound steps at the last log point
    state = {"step": 0, "batch_loss": [], "window_start": 0, "logged": [], "cap_bound_at_log": 0}
    resumed = load_checkpoint(checkpoint, fingerprint) if checkpoint else None
    if resumed is not None:
        model.load_state_dict(resumed["model"])
        optimizer.load_state_dict(resumed["optimizer"])
        set_rng_state(resumed["rng"], device)
        state = resumed["state"]
        log.info("resumed from %s at step %d of %d", checkpoint, state["step"], total)
    # compiled lazily, at the first forward; the checkpoint keeps the plain model's state
    forward = torch.compile(model, mode=COMPILE_MODE) if schedule.compile else model
    losses = StepLosses(state["batch_loss"], state["window_start"])

    def log_point(step: int) -> None:
        count = losses.window_count()
        row = {
            "step": step,
            "train_loss": losses.window_mean(),
            **evaluate(task, device, schedule, forward),
        }
        if probe is not None:
            row[PROBE_METRIC] = probe_loss(task, probe, device, schedule, forward)
        if task.model_metrics is not None:
            row.update(task.model_metrics(model))
        if isinstance(optimizer, CapCount):  # the count is read here only, not per step
            bound = optimizer.cap_bound_steps
            since = bound - state.get("cap_bound_at_log", 0)
            row["cap_bound_share"] = since / count if count else np.nan
            state["cap_bound_at_log"] = bound
        state["logged"].append(row)
        losses.reset()

    if state["step"] == 0 and not state["logged"]:
        log_point(0)
    bar = tqdm(
        total=total, initial=state["step"], disable=not schedule.progress, unit="step",
        mininterval=5.0, file=schedule.progress_file,
    )  # fmt: skip
    started, started_step = time.perf_counter(), state["step"]
    shown_loss = "-"  # the last logged train loss: a step's own loss is never read
    orders = _EpochOrders(task, schedule)
    while state["step"] < total:
        step = state["step"]
        epoch, position = divmod(step, per_epoch)
        order = orders[epoch]
        index = order[position * schedule.batch_size : (position + 1) * schedule.batch_size]
        batch = _batch(task, task.train, index, device)
        # torch's closure convention, which every optimizer takes; SPS reads the loss from it
        loss = optimizer.step(
            partial(_loss_and_gradient, task, forward, optimizer, batch, schedule)
        )
        losses.add(loss)
        state["step"] = step + 1
        if state["step"] % schedule.log_every == 0 or state["step"] == total:
            log_point(state["step"])
            shown_loss = f"{state['logged'][-1]['train_loss']:.4f}"
        every = schedule.checkpoint_every
        if checkpoint and every and state["step"] % every == 0:
            state["batch_loss"], state["window_start"] = losses.read(), losses.window_start
            save_checkpoint(
                checkpoint,
                {
                    "fingerprint": fingerprint,
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "rng": rng_state(device),
                    "state": state,
                },
            )
        # samples/s as queued by the host: the device's pace once its queue is full
        rate = (
            (state["step"] - started_step) * schedule.batch_size / (time.perf_counter() - started)
        )
        bar.set_postfix(loss=shown_loss, samples_per_s=f"{rate:.0f}", refresh=False)
        bar.update(1)
    bar.close()
    if checkpoint and Path(checkpoint).exists():
        Path(checkpoint).unlink()
    rows = state["logged"]
    names = sorted({k for row in rows for k in row} - {"step"})
    steps = np.array([row["step"] for row in rows], dtype=np.int64)
    metrics = {name: np.array([row.get(name, np.nan) for row in rows]) for name in names}
    metrics[BATCH_LOSS] = np.array(losses.read(), dtype=np.float64)
    return steps, metrics


def every_step(steps: np.ndarray, metrics: dict[str, np.ndarray]):
    """`fit`'s result laid out on every iteration 0..total (the run table's rows): the log
    points' metrics at their steps (NaN between them, rows the table leaves out) and
    BATCH_LOSS at iterations 0..total-1."""
    total = int(steps[-1])
    every = np.arange(total + 1, dtype=np.int64)
    out = {}
    for name, values in metrics.items():
        column = np.full(total + 1, np.nan)
        if name == BATCH_LOSS:
            column[: len(values)] = values
        else:
            column[steps] = values
        out[name] = column
    return every, out
