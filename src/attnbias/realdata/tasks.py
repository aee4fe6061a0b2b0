"""Build the `Task` of a real-data experiment: its data as tensors, its model, its metrics."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from attnbias.realdata import bert, civilcomments, mnli, packaged_text, sources, vision, vit
from attnbias.realdata.text import TextSplit
from attnbias.realdata.trainer import Task

NUM_LABELS = {
    "mnli": 3,
    "civilcomments": 2,
    **{name: 2 for name in packaged_text.DATASETS},  # binary: sentiment, spam
    "mnist": 10,
    "cifar10": 10,
    "mnist5k": 10,
}
SUBSET_SEED = 0  # one subset for every optimizer and seed, so their curves compare


def subset_indices(n: int, size: int | None) -> np.ndarray | None:
    """A seeded subset of `size` of n samples (None: all of them)."""
    if size is None or size >= n:
        return None
    return np.sort(np.random.default_rng(SUBSET_SEED).choice(n, size=size, replace=False))


def _take(split: TextSplit, idx: np.ndarray) -> TextSplit:
    """Rows `idx` of the split, in that order (texts, pairs, labels and metadata alike)."""
    pick = [split.texts[i] for i in idx]
    pairs = None if split.pairs is None else [split.pairs[i] for i in idx]
    metadata = None if split.metadata is None else split.metadata[idx]
    return replace(split, texts=pick, pairs=pairs, labels=split.labels[idx], metadata=metadata)


def _text_subset(split: TextSplit, size: int | None) -> TextSplit:
    idx = subset_indices(len(split), size)
    return split if idx is None else _take(split, idx)


def _by_length(split: TextSplit) -> TextSplit:
    """The split ordered by text length: evaluation batches then hold alike lengths, so
    dynamic padding (bert.trim_padding) pads little. Accuracy does not depend on the order;
    the metadata moves with its rows. (Training batches stay random: bucketing them by
    length would change the sampling, and spam is longer than ham.)"""
    pairs = split.pairs if split.pairs is not None else [""] * len(split)
    lengths = [len(t) + len(p) for t, p in zip(split.texts, pairs, strict=True)]
    return _take(split, np.argsort(lengths, kind="stable"))


def _tensor_subset(data: dict[str, torch.Tensor], size: int | None) -> dict[str, torch.Tensor]:
    idx = subset_indices(len(data["labels"]), size)
    return data if idx is None else {k: v[torch.from_numpy(idx)] for k, v in data.items()}


def _bert_logits(model, batch):
    return model(**batch).logits


def _vit_logits(model, batch):
    return model(batch["images"])


def layer_norm_metrics(model) -> dict[str, float]:
    """Per-layer parameter norms as metrics "norm/NN layer", NN keeping the model's order."""
    norms = vit.layer_parameter_norms(model)
    return {f"norm/{i:02d} {name}": value for i, (name, value) in enumerate(norms.items())}


def text_task(settings: dict, *, seed: int, data_root: str) -> Task:
    dataset, train = settings["dataset"], settings["train"]
    model_path = sources.model_location(settings["model_path"], data_root)
    tokenizer, model = bert.load_text_model(model_path, NUM_LABELS[dataset], seed=seed)
    evaluate_extra = None
    if dataset in packaged_text.DATASETS:  # sized and stratified by the split itself
        sizes = {"train": train["train_samples"], "test": train["test_samples"]}
        splits = packaged_text.load(dataset, data_root, **sizes)
    elif dataset == "mnli":
        splits = {name: mnli.load_mnli(data_root, name) for name in ("train", "test")}
    else:
        civil = civilcomments.load_civilcomments(data_root)
        splits = {name: civil.split(name) for name in ("train", "test")}
    splits["train"] = _text_subset(splits["train"], train["train_samples"])
    splits["test"] = _by_length(_text_subset(splits["test"], train["test_samples"]))
    if dataset == "civilcomments":
        group_eval = civil.evaluator(splits["test"])

        def evaluate_extra(predicted, labels):
            return {"worst_group_accuracy": group_eval(predicted, labels)["acc_wg"]}

    encoded = {
        name: bert.tokenize_split(tokenizer, split, settings["max_length"])
        for name, split in splits.items()
    }
    return Task(
        model=model,
        train=encoded["train"],
        test=encoded["test"],
        logits=_bert_logits,
        evaluate_extra=evaluate_extra,
        collate=bert.trim_padding,
    )


def vision_task(settings: dict, *, seed: int, data_root: str) -> Task:
    splits = vision.load_vision(settings["dataset"], data_root)
    data = {
        name: {"images": split.images, "labels": split.labels} for name, split in splits.items()
    }
    train = settings["train"]
    _, channels, size, _ = data["train"]["images"].shape
    with torch.random.fork_rng(devices=[]):  # the model's initialisation: a function of seed
        torch.manual_seed(seed)
        model = vit.ViTSmall(
            image_size=size,
            channels=channels,
            num_classes=NUM_LABELS[settings["dataset"]],
            **settings["vit"],
        )
    return Task(
        model=model,
        train=_tensor_subset(data["train"], train["train_samples"]),
        test=_tensor_subset(data["test"], train["test_samples"]),
        logits=_vit_logits,
        model_metrics=layer_norm_metrics if settings["layer_norms"] else None,
    )


def build(settings: dict, *, seed: int, data_root: str) -> Task:
    """The task of an experiment's config section (see config/README.md, real_data)."""
    torch.manual_seed(seed)  # dropout and everything else random in training
    if settings["dataset"] in sources.TEXT_DATASETS:
        return text_task(settings, seed=seed, data_root=data_root)
    return vision_task(settings, seed=seed, data_root=data_root)
