"""Tiny BERT and ViT-small tasks and `trainer.fit` runs on them, for any device: the CPU
tests of the trainer (tests/realdata/test_trainer.py) and the GPU tests
(tests/project/test_cuda.py) share them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from attnbias.optim.stochastic import SNGD, SPS
from attnbias.realdata import trainer
from attnbias.realdata.vit import ViTSmall, layer_parameter_norms

CLASSES, SEQ, VOCAB, IMAGE = 3, 12, 50, 8


def tiny_bert(seed: int = 0, dropout: float = 0.0):
    """A 2-layer BertForSequenceClassification (hidden 32), as
    tests/project/test_hf_example.py builds it."""
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=16,
        num_labels=CLASSES,
        pad_token_id=0,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return transformers.BertForSequenceClassification(config)


def bert_data(n: int, seed: int = 1) -> dict[str, torch.Tensor]:
    """Token ids with padding at the end of some rows (so the attention mask matters), two
    segments, and labels that follow the first token (learnable)."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, VOCAB, (n, SEQ), generator=gen)
    lengths = torch.randint(SEQ // 2, SEQ + 1, (n,), generator=gen)
    mask = (torch.arange(SEQ)[None] < lengths[:, None]).long()
    types = (torch.arange(SEQ)[None] >= lengths[:, None] // 2).long() * mask
    return {
        "input_ids": ids * mask,
        "attention_mask": mask,
        "token_type_ids": types,
        "labels": ids[:, 0] % CLASSES,
    }


def tiny_vit(seed: int = 0, dropout: float = 0.0) -> ViTSmall:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return ViTSmall(
            image_size=IMAGE,
            channels=3,
            num_classes=CLASSES,
            patch_size=4,
            dim=32,
            depth=2,
            heads=2,
            dim_head=8,
            mlp_dim=64,
            dropout=dropout,
            emb_dropout=dropout,
        )


def vit_data(n: int, seed: int = 1) -> dict[str, torch.Tensor]:
    """Random images whose label is the brightest of the three channels (learnable)."""
    gen = torch.Generator().manual_seed(seed)
    images = torch.rand(n, 3, IMAGE, IMAGE, generator=gen)
    labels = torch.randint(0, CLASSES, (n,), generator=gen)
    images[torch.arange(n), labels] += 0.5
    return {"images": images, "labels": labels}


def bert_logits(model, batch):
    return model(**batch).logits


def vit_logits(model, batch):
    return model(batch["images"])


MODELS = {
    "bert": (tiny_bert, bert_data, bert_logits),
    "vit": (tiny_vit, vit_data, vit_logits),
}


# ---------------------------------------------------------------- checkpoint and resume


class Interrupted(Exception):
    """Stands in for the job being killed."""


# 40 training samples in batches of 8: 5 steps an epoch, 2 epochs. Logged at 0, 3, 6, 9, 10;
# checkpoints at 4 and 8. The interrupted run stops in its 7th step (after the checkpoint at
# 4 and the log point at 6), so the resumed run restarts mid-epoch from a half-filled log
# window, repeats the logging at 6 and crosses the epoch boundary.
SCHEDULE = dict(epochs=2, batch_size=8, log_every=3, checkpoint_every=4, eval_batch_size=16)
N_TRAIN, N_TEST, STOP_AT, RESUMED_AT = 40, 24, 7, 4

RESUME_OPTIMIZERS = {  # each with state to carry over (momentum buffers, Adam's moments)
    "sgd": lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9),
    "sngd": lambda params: SNGD(params, lr=0.05, momentum=0.9),
    "sps": lambda params: SPS(params, eta_max=0.5),
    "adam": lambda params: torch.optim.Adam(params, lr=1e-3),
}


def resume_task(model_name: str, stop_at: int | None = None):
    """(Task, training-call counter). Dropout is on, so resuming must restore the random
    state. With `stop_at`, the stop_at-th training forward raises Interrupted."""
    build, make_data, logits_of = MODELS[model_name]
    calls = {"train": 0}

    def logits(model, batch):
        if model.training:  # evaluation runs in eval mode
            calls["train"] += 1
            if calls["train"] == stop_at:
                raise Interrupted
        return logits_of(model, batch)

    def model_metrics(model):
        if model_name == "vit":  # fig7's per-layer norms
            return {f"norm/{k}": v for k, v in layer_parameter_norms(model).items()}
        return {"classifier_norm": float(model.classifier.weight.detach().double().norm())}

    task = trainer.Task(
        model=build(seed=0, dropout=0.1),
        train=make_data(N_TRAIN, seed=1),
        test=make_data(N_TEST, seed=2),
        logits=logits,
        model_metrics=model_metrics,
    )
    return task, calls


def fit_run(model_name, optimizer_name, device, *, checkpoint=None, stop_at=None, autocast=True):
    """One trainer.fit run from seed 0: ((steps, metrics), training forwards taken)."""
    torch.manual_seed(0)  # as tasks.build does: dropout draws from the global generators
    task, calls = resume_task(model_name, stop_at)
    optimizer = RESUME_OPTIMIZERS[optimizer_name](task.model.parameters())
    schedule = trainer.Schedule(**SCHEDULE, seed=0, autocast=autocast, progress=False)
    result = trainer.fit(
        task,
        optimizer,
        schedule,
        device=torch.device(device),
        checkpoint=checkpoint,
        fingerprint={"model": model_name, "optimizer": optimizer_name},
    )
    return result, calls["train"]


def resume_against_uninterrupted(
    model_name, optimizer_name, device, tmp_path: Path, *, autocast: bool = True
):
    """(uninterrupted, again uninterrupted, resumed): each (steps, metrics)."""
    reference, calls = fit_run(model_name, optimizer_name, device, autocast=autocast)
    total = SCHEDULE["epochs"] * (N_TRAIN // SCHEDULE["batch_size"])
    assert calls == total
    again, _ = fit_run(model_name, optimizer_name, device, autocast=autocast)
    checkpoint = tmp_path / f"{model_name}-{optimizer_name}.pt"
    with pytest.raises(Interrupted):
        fit_run(
            model_name,
            optimizer_name,
            device,
            checkpoint=checkpoint,
            stop_at=STOP_AT,
            autocast=autocast,
        )
    assert checkpoint.exists()
    # the restarted process: a new model and optimizer, other random state
    torch.manual_seed(12345)
    resumed, calls = fit_run(
        model_name, optimizer_name, device, checkpoint=checkpoint, autocast=autocast
    )
    assert calls == total - RESUMED_AT  # it resumed from the checkpoint at step 4
    assert not checkpoint.exists()  # removed once the run is complete
    return reference, again, resumed


def assert_same_run(a, b, what: str) -> None:
    (steps_a, metrics_a), (steps_b, metrics_b) = a, b
    np.testing.assert_array_equal(steps_a, steps_b)
    assert set(metrics_a) == set(metrics_b)
    for name in metrics_a:  # bitwise, NaN (train_loss at step 0) included
        np.testing.assert_array_equal(metrics_a[name], metrics_b[name], err_msg=f"{what}: {name}")
