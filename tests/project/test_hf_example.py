"""SPS inside a real Hugging Face Trainer (SPSTrainer of examples/hf_trainer.py), tiny BERT.

Every optimizer step of the Trainer is checked against SPS recomputed here: the loss and
gradient of the whole (one-batch) dataset from an independent forward/backward on a copy
of the model, then p <- p - min(eta_max, loss / (c ||g||^2)) g.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from hf_trainer import SPSTrainer  # noqa: E402
from tiny_runs import CLASSES, VOCAB, tiny_bert  # noqa: E402

from attnbias.optim.stochastic import SPS  # noqa: E402

N, SEQ = 8, 6


def _model():
    # no dropout: deterministic, so the check can recompute every step
    return tiny_bert(seed=0, dropout=0.0)


def _dataset():
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(1, VOCAB, (N, SEQ), generator=gen)
    labels = torch.randint(0, CLASSES, (N,), generator=gen)
    return [
        {
            "input_ids": ids[i],
            "attention_mask": torch.ones(SEQ, dtype=torch.long),
            "labels": labels[i],
        }
        for i in range(N)
    ]


class RecomputeSPS(transformers.TrainerCallback):
    """Before each optimizer step, predicts the update; measures it after the step."""

    def __init__(self, dataset, eta_max, c):
        self.batch = {k: torch.stack([row[k] for row in dataset]) for k in dataset[0]}
        self.eta_max, self.c = eta_max, c
        self.before, self.update, self.errors, self.sizes = None, None, [], []

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        reference = copy.deepcopy(model)
        reference.zero_grad()
        loss = reference(**self.batch).loss  # mean over all N: the accumulated batch
        loss.backward()
        grads = [p.grad for p in reference.parameters()]
        sq = sum(float((g**2).sum()) for g in grads)
        size = min(self.eta_max, float(loss.detach()) / (self.c * sq))
        # the Trainer's accumulated gradient must be the reference one
        for p, g in zip(model.parameters(), grads, strict=True):
            torch.testing.assert_close(p.grad, g, rtol=1e-4, atol=1e-6)
        self.before = [p.detach().clone() for p in model.parameters()]
        self.update = [size * g for g in grads]
        self.sizes.append(size)

    def on_optimizer_step(self, args, state, control, model=None, **kwargs):
        # ||actual update - expected update|| / ||expected update||, over all parameters
        diff = expected = 0.0
        for p, b, u in zip(model.parameters(), self.before, self.update, strict=True):
            diff += float(((b - p.detach()) - u).pow(2).sum())
            expected += float(u.pow(2).sum())
        self.errors.append((diff / expected) ** 0.5)


def _args(tmp_path, **overrides):
    settings = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=N // 2,
        gradient_accumulation_steps=2,  # two micro-batches: the handed-over losses add up
        max_steps=3,
        max_grad_norm=0.0,
        lr_scheduler_type="constant",
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        logging_steps=100,
        seed=0,
    )
    settings.update(overrides)
    return transformers.TrainingArguments(**settings)


@pytest.mark.parametrize("eta_max", [float("inf"), 0.1])
def test_sps_trainer_steps_as_sps_says(tmp_path, eta_max):
    model, dataset = _model(), _dataset()
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = SPS(model.parameters(), eta_max=eta_max, c=0.5)
    check = RecomputeSPS(dataset, eta_max=eta_max, c=0.5)
    trainer = SPSTrainer(
        model=model,
        args=_args(tmp_path),
        train_dataset=dataset,
        optimizers=(optimizer, None),
        callbacks=[check],
    )
    # transformers 5.23 takes BERT's **kwargs for "normalises its loss by num_items_in_batch"
    # (it does not) and skips the division by gradient_accumulation_steps: the accumulated
    # gradient is then the SUM of the micro-batch means (huggingface/transformers#47688).
    # This flag is the Trainer's own switch for models whose loss is a per-batch mean.
    trainer.model_accepts_loss_kwargs = False
    trainer.train()
    assert len(check.errors) == 3
    assert max(check.errors) < 1e-4, check.errors
    assert all(size is not None for size in optimizer.last_step_sizes)
    if eta_max == 0.1:
        assert check.sizes == [0.1] * 3  # the cap binds on this problem ...
    else:
        assert check.sizes[0] > 1.0  # ... where the first Polyak step is about 12
    moved = sum(
        float((p.detach() - b).norm()) for p, b in zip(model.parameters(), before, strict=True)
    )
    assert moved > 0


def test_sps_trainer_refuses_gradient_clipping(tmp_path):
    model, dataset = _model(), _dataset()
    trainer = SPSTrainer(
        model=model,
        args=_args(tmp_path, max_grad_norm=1.0, max_steps=1),
        train_dataset=dataset,
        optimizers=(SPS(model.parameters(), eta_max=1.0), None),
    )
    with pytest.raises(ValueError, match="max_grad_norm=0.0"):
        trainer.train()


def test_plain_trainer_cannot_drive_sps(tmp_path):
    """Why SPSTrainer exists: the stock Trainer calls step() with no loss."""
    model, dataset = _model(), _dataset()
    trainer = transformers.Trainer(
        model=model,
        args=_args(tmp_path, max_steps=1),
        train_dataset=dataset,
        optimizers=(SPS(model.parameters(), eta_max=1.0), None),
    )
    with pytest.raises(ValueError, match="needs the mini-batch loss"):
        trainer.train()
