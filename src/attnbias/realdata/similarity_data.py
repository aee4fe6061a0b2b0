"""Fig. 10's numbers for one dataset: load texts and BERT, bin the within-text cosines."""

from __future__ import annotations

import logging

import pandas as pd
import torch

from attnbias.realdata import bert, civilcomments, mnli, packaged_text, similarity, sources


def dataset_texts(dataset: str, data_root: str) -> tuple[list[str], list[str] | None]:
    """The training texts of `dataset` (MNLI: premise and hypothesis, read as one input;
    the packaged corpora: every labelled text)."""
    if dataset in packaged_text.DATASETS:
        texts, _, _ = packaged_text.read(dataset, data_root)
        return texts, None
    if dataset == "mnli":
        split = mnli.load_mnli(data_root, "train")
    else:
        split = civilcomments.load_civilcomments(data_root).split("train")
    return split.texts, split.pairs


def dataset_histogram(
    dataset: str, settings: dict, *, data_root: str, device: torch.device
) -> similarity.CosineHistogram:
    """The histogram over settings["samples"] texts drawn with settings["seed"]."""
    model_path = sources.model_location(settings["model_path"], data_root)
    tokenizer, model = bert.load_text_model(model_path, num_labels=2, seed=0, head_unused=True)
    logging.info(
        "read %s's word-embedding matrix only (its classification head, new, is never used)",
        model_path,
    )
    embeddings = model.get_input_embeddings().weight.to(device)
    texts, pairs = dataset_texts(dataset, data_root)
    return similarity.cosine_histogram(
        tokenizer,
        embeddings,
        texts,
        pairs,
        n_texts=settings["samples"],
        seed=settings["seed"],
        max_length=settings["max_length"],
    )


def histogram_frame(histogram: similarity.CosineHistogram, band: float) -> pd.DataFrame:
    """One row per bin (lo, hi, count), with the summary repeated on every row."""
    return pd.DataFrame(
        {
            "lo": histogram.edges[:-1],
            "hi": histogram.edges[1:],
            "count": histogram.counts,
            "texts": histogram.n_texts,
            "pairs": histogram.n_pairs,
            "identical_pairs": histogram.n_identical,
            "band": band,
            "within_band": similarity.fraction_within(histogram, band),
        }
    )
