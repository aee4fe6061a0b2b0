"""BERT for the text figures: tokenizer and classifier from a local folder or the hub (never
downloaded where HF_HUB_OFFLINE is set), and a split as the tensors a training loop batches.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import torch

from attnbias.realdata.hub import find_model, hub_offline, model_missing
from attnbias.realdata.text import TextSplit

# PyTorch's fused scaled-dot-product attention (flash / memory-efficient kernels on a GPU)
ATTENTION = "sdpa"
SEQUENCE_KEYS = ("input_ids", "attention_mask", "token_type_ids")


@contextlib.contextmanager
def _head_report_silenced(silenced: bool):
    """transformers' load report at error level only, where `silenced`: it lists the new
    classification head as MISSING and says to train it ("Consider training on your
    downstream task"), which a caller that reads only the embeddings, or only checks that
    the model loads, knows and says in its own words."""
    if not silenced:
        yield
        return
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)


def load_text_model(
    name_or_path: str,
    num_labels: int,
    *,
    seed: int | None = None,
    attention: str = ATTENTION,
    head_unused: bool = False,
):
    """(tokenizer, AutoModelForSequenceClassification) from a local `save_pretrained` folder,
    or a hub name: from the local cache first, then (unless HF_HUB_OFFLINE) the hub.

    The classification head is new (random); `seed` makes it reproducible without touching
    the global random state. `attention`: transformers' attn_implementation ("sdpa", or
    "eager" for the plain softmax(QK^T/sqrt(d))V the tests compare it with). Raises
    MissingDataError naming the model, the config key `real_data.models.bert` and how to get
    the weights. `head_unused`: the caller never uses the head (it reads the embeddings,
    or checks the model loads), so transformers' report of it as untrained is not printed.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    def load(source: str, local_only: bool):
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        with torch.random.fork_rng(devices=[]), _head_report_silenced(head_unused):
            if seed is not None:
                torch.manual_seed(seed)
            model = AutoModelForSequenceClassification.from_pretrained(
                source,
                num_labels=num_labels,
                local_files_only=local_only,
                attn_implementation=attention,
            )
        return tokenizer, model

    local = find_model(name_or_path)  # at once, where it is in no folder, cache or hub
    if local:
        return load(str(Path(name_or_path).expanduser()), local_only=True)
    try:  # a hub name: the local cache first, so an offline machine never waits on retries
        return load(name_or_path, local_only=True)
    except OSError as err:
        if hub_offline():
            raise model_missing(
                name_or_path,
                f"Not in the Hugging Face cache and HF_HUB_OFFLINE is set ({err}).",
                local=False,
            ) from None
    try:
        return load(name_or_path, local_only=False)
    except OSError as err:
        raise model_missing(
            name_or_path, f"The hub could not be reached ({err}).", local=False
        ) from None


def tokenize_split(
    tokenizer, split: TextSplit, max_length: int, *, chunk: int = 8192
) -> dict[str, torch.Tensor]:
    """The split as equally long int64 tensors: input_ids, attention_mask, token_type_ids (each
    (n, max_length): truncated to max_length, pairs "longest first", and padded to it) and
    labels (n,). Tokenized in chunks, so peak memory stays near the tensors' own size."""
    n = len(split)
    ids = np.full((n, max_length), tokenizer.pad_token_id, dtype=np.int64)
    types = np.zeros((n, max_length), dtype=np.int64)
    mask = np.zeros((n, max_length), dtype=np.int64)
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        # unpadded lists, padded here: twice as fast as the tokenizer's own padding to numpy
        enc = tokenizer(
            split.texts[start:stop],
            split.pairs[start:stop] if split.pairs is not None else None,
            truncation=True,
            max_length=max_length,
            return_token_type_ids=True,
            return_attention_mask=False,
        )
        for row, (tok_ids, tok_types) in enumerate(
            zip(enc["input_ids"], enc["token_type_ids"], strict=True), start=start
        ):
            ids[row, : len(tok_ids)] = tok_ids
            types[row, : len(tok_ids)] = tok_types
            mask[row, : len(tok_ids)] = 1
    out = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    out = {k: torch.from_numpy(v) for k, v in out.items()}
    out["labels"] = torch.from_numpy(np.asarray(split.labels, dtype=np.int64).copy())
    return out


def trim_padding(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Dynamic padding: the batch cut to its longest row. Rows are padded at the end
    (`tokenize_split`), so the columns cut hold only padding, which the attention mask
    hides: the logits stay the same to rounding, at the cost of the real tokens only (MNLI
    pairs average about 40 tokens of a max_length of 128). Runs on the host's copy of the
    batch, before it goes to the device."""
    length = int(batch["attention_mask"].sum(dim=1).max()) if len(batch["labels"]) else 0
    return {k: v[:, :length] if k in SEQUENCE_KEYS else v for k, v in batch.items()}
