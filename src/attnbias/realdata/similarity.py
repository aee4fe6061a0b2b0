"""Fig. 10 (App. C.3): how close to orthogonal BERT's token embeddings are within a text,
the empirical support the paper gives for Assumption 1.

For each sampled text, the tokens' rows of BERT's word-embedding matrix (the input token
embeddings, without position or segment embeddings) are compared pair by pair: the cosine
of every unordered pair of distinct positions (i < j). Our choices, where the paper says
only "every pair of token embeddings" of a sentence:
- [CLS], [SEP] and padding are left out by default: they are not the text's tokens, and
  [CLS]/[SEP] would add the same pairs to every text. `include_special=True` keeps
  [CLS]/[SEP] (padding is always left out).
- An MNLI example is the model's input, premise and hypothesis together: pass the
  hypotheses as `pairs`.
- Repeated tokens (the same word twice in a text) are pairs too and give cosine 1; the
  histogram counts them separately (`n_identical`) so a caption can say how many.

50k to 100k texts give up to about 10^8 to 10^9 pairs, too many to keep: values are
binned into fixed bins on [-1, 1] while streaming (default 2000 bins of width 0.001), and
`fraction_within` reads a band's share from the bins (exact when the band is a multiple of
the bin width). `cosine_values` returns the raw values for small samples and tests.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch


def pair_cosines(unit: torch.Tensor, input_ids: torch.Tensor, keep: torch.Tensor):
    """Cosines of every pair i < j of kept positions within each row of a batch.

    unit: (V, d) embedding table with unit rows; input_ids, keep: (B, L) token ids and a
    bool mask of the positions to compare. Returns (values, same_token): (P,) cosines and
    a (P,) bool mask of the pairs whose two tokens are the same token.
    """
    E = unit[input_ids]  # (B, L, d)
    S = E @ E.transpose(1, 2)  # (B, L, L): cosines, the rows being unit vectors
    L = input_ids.shape[1]
    upper = torch.ones(L, L, dtype=torch.bool, device=keep.device).triu(1)
    mask = keep[:, :, None] & keep[:, None, :] & upper
    same = input_ids[:, :, None] == input_ids[:, None, :]
    return S[mask], same[mask]


def unit_rows(embeddings: torch.Tensor) -> torch.Tensor:
    """The embedding table with each row scaled to unit length (float32, detached)."""
    table = embeddings.detach().float()
    return table / table.norm(dim=1, keepdim=True).clamp_min(1e-12)


def sample_indices(n_total: int, n: int | None, seed: int) -> np.ndarray:
    """A seeded sample of n of n_total indices, sorted (all of them when n is None or
    not smaller than n_total)."""
    if n is None or n >= n_total:
        return np.arange(n_total)
    return np.sort(np.random.default_rng(seed).choice(n_total, size=n, replace=False))


def _batches(
    tokenizer,
    unit: torch.Tensor,
    texts: Sequence[str],
    pairs: Sequence[str] | None,
    *,
    max_length: int,
    batch_size: int,
    include_special: bool,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """(values, same_token) per batch of texts, the texts sorted by length so that a batch
    pads to nearly its own length."""
    enc = tokenizer(
        list(texts),
        list(pairs) if pairs is not None else None,
        truncation=True,
        max_length=max_length,
        return_special_tokens_mask=True,
        return_attention_mask=False,
        return_token_type_ids=False,
    )
    ids, special = enc["input_ids"], enc["special_tokens_mask"]
    order = np.argsort([len(x) for x in ids], kind="stable")
    device = unit.device
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        width = max(len(ids[r]) for r in rows)
        batch_ids = np.zeros((len(rows), width), dtype=np.int64)
        keep = np.zeros((len(rows), width), dtype=bool)  # padding stays False
        for k, r in enumerate(rows):
            n = len(ids[r])
            batch_ids[k, :n] = ids[r]
            keep[k, :n] = True if include_special else ~np.asarray(special[r], dtype=bool)
        yield pair_cosines(
            unit, torch.from_numpy(batch_ids).to(device), torch.from_numpy(keep).to(device)
        )


def cosine_values(
    tokenizer,
    embeddings: torch.Tensor,
    texts: Sequence[str],
    pairs: Sequence[str] | None = None,
    *,
    max_length: int = 128,
    batch_size: int = 256,
    include_special: bool = False,
) -> np.ndarray:
    """Every within-text pair cosine of `texts` (and `pairs`) as one float32 array (order:
    by text length, then position). For small samples: large ones want `cosine_histogram`."""
    unit = unit_rows(embeddings)
    with torch.no_grad():
        parts = [
            v.cpu().numpy()
            for v, _ in _batches(
                tokenizer,
                unit,
                texts,
                pairs,
                max_length=max_length,
                batch_size=batch_size,
                include_special=include_special,
            )
        ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


@dataclass
class CosineHistogram:
    """Within-text pair cosines binned on [-1, 1]; bin k is [edges[k], edges[k+1]) (the last
    one also holds 1). mean and std are of the raw values, not of the bins."""

    edges: np.ndarray  # (bins + 1,)
    counts: np.ndarray  # (bins,) int64
    n_texts: int
    n_pairs: int
    n_identical: int  # pairs of the same token twice (cosine 1)
    mean: float
    std: float

    def fraction_within(self, band: float) -> float:
        return fraction_within(self, band)


def cosine_histogram(
    tokenizer,
    embeddings: torch.Tensor,
    texts: Sequence[str],
    pairs: Sequence[str] | None = None,
    *,
    n_texts: int | None = None,
    seed: int = 0,
    max_length: int = 128,
    bins: int = 2000,
    batch_size: int = 256,
    include_special: bool = False,
) -> CosineHistogram:
    """Histogram of the within-text pair cosines over a seeded sample of n_texts texts.

    tokenizer: BERT's; embeddings: its (V, d) word-embedding matrix,
    `model.get_input_embeddings().weight` (on the device to compute on).
    """
    idx = sample_indices(len(texts), n_texts, seed)
    texts = [texts[i] for i in idx]
    pairs = [pairs[i] for i in idx] if pairs is not None else None
    unit = unit_rows(embeddings)
    counts = torch.zeros(bins, dtype=torch.int64, device=unit.device)
    n_pairs = n_identical = 0
    total = total_sq = 0.0
    with torch.no_grad():
        for values, same in _batches(
            tokenizer,
            unit,
            texts,
            pairs,
            max_length=max_length,
            batch_size=batch_size,
            include_special=include_special,
        ):
            k = ((values + 1) * (bins / 2)).floor().long().clamp_(0, bins - 1)
            counts += torch.bincount(k, minlength=bins)
            n_pairs += values.numel()
            n_identical += int(same.sum())
            v = values.double()
            total += float(v.sum())
            total_sq += float((v * v).sum())
    mean = total / n_pairs if n_pairs else float("nan")
    var = total_sq / n_pairs - mean * mean if n_pairs else float("nan")
    return CosineHistogram(
        edges=np.linspace(-1.0, 1.0, bins + 1),
        counts=counts.cpu().numpy(),
        n_texts=len(texts),
        n_pairs=n_pairs,
        n_identical=n_identical,
        mean=mean,
        std=float(np.sqrt(max(var, 0.0))),
    )


def fraction_within(values, band: float) -> float:
    """The fraction of cosines with |cos| <= band (raw values), or in [-band, band) (a
    CosineHistogram, whose bins must then tile the band: band a multiple of the width)."""
    if band <= 0:
        raise ValueError(f"band must be positive, got {band}")
    if isinstance(values, CosineHistogram):
        edges, counts = values.edges, values.counts
        width = edges[1] - edges[0]
        steps = band / width
        if abs(steps - round(steps)) > 1e-6:
            raise ValueError(
                f"band {band} is not a multiple of the bin width {width:g}: bins cannot give "
                "its fraction exactly; choose a band on the bin grid or more bins"
            )
        lo = np.searchsorted(edges, -band - width / 2)  # the edge at -band
        hi = np.searchsorted(edges, band - width / 2)  # the edge at +band
        n = counts.sum()
        return float(counts[lo:hi].sum() / n) if n else float("nan")
    values = np.asarray(values)
    return float(np.mean(np.abs(values) <= band)) if values.size else float("nan")
