"""Within-text cosine similarities of BERT token embeddings (Fig. 10)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from fixtures_text import fixture_vocab, write_civilcomments, write_mnli, write_tiny_bert

from attnbias.realdata import bert as bert_module
from attnbias.realdata import civilcomments
from attnbias.realdata import mnli as mnli_module
from attnbias.realdata import similarity as sim

# a toy table: ids 0 [PAD], 1 [CLS], 2 [SEP], 3 a, 4 b, 5 c
TOY = torch.tensor([[0.0, 0.0], [3.0, 1.0], [-1.0, 2.0], [1.0, 0.0], [1.0, 1.0], [-1.0, 3.0]])
# cosines by hand: a.b/(|a||b|) = 1/sqrt(2); a.c = -1/sqrt(10); b.c = 2/(sqrt(2) sqrt(10))
HAND = {(3, 4): 1 / math.sqrt(2), (3, 5): -1 / math.sqrt(10), (4, 5): 2 / math.sqrt(20)}


def test_pair_cosines_match_a_hand_computed_matrix():
    ids = torch.tensor([[1, 3, 4, 5, 2, 0], [1, 4, 4, 2, 0, 0]])
    keep = torch.tensor([[0, 1, 1, 1, 0, 0], [0, 1, 1, 0, 0, 0]], dtype=torch.bool)
    values, same = sim.pair_cosines(sim.unit_rows(TOY), ids, keep)
    # sentence 1: pairs (a,b), (a,c), (b,c); sentence 2: (b,b) = 1, a repeated token
    expected = [HAND[(3, 4)], HAND[(3, 5)], HAND[(4, 5)], 1.0]
    assert torch.allclose(values, torch.tensor(expected), atol=1e-6)
    assert same.tolist() == [False, False, False, True]
    # keeping [CLS] and [SEP] of sentence 1 adds their pairs: C(5, 2) = 10 in all
    keep[0, [0, 4]] = True
    values, _ = sim.pair_cosines(sim.unit_rows(TOY), ids, keep)
    assert len(values) == 10 + 1
    assert values[0] == pytest.approx(3 / math.sqrt(10), abs=1e-6)  # [CLS], a


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    path = write_tiny_bert(tmp_path_factory.mktemp("bert"), fixture_vocab())
    tok, model = bert_module.load_text_model(str(path), num_labels=2, seed=0)
    return tok, model.get_input_embeddings().weight.detach()


def test_cosines_through_the_tokenizer_skip_special_tokens_and_padding(bert):
    tok, emb = bert
    emb = emb.clone()
    words = ["yes", "maybe", "never"]
    ids = tok.convert_tokens_to_ids(words)
    emb[ids] = 0.0
    emb[ids, 5:7] = TOY[3:] * 7.0  # a, b, c in two of the 32 dimensions, another length
    texts = ["yes maybe never", "maybe maybe", "yes"]  # padded in one batch
    values = sim.cosine_values(tok, emb, texts, batch_size=8)
    assert np.allclose(np.sort(values), np.sort([*HAND.values(), 1.0]), atol=1e-6)
    # pairs: premise and hypothesis are one token sequence
    values = sim.cosine_values(tok, emb, ["yes maybe"], ["never"])
    assert np.allclose(np.sort(values), np.sort(list(HAND.values())), atol=1e-6)
    # with [CLS] and [SEP]: 5, 4 and 3 tokens
    assert len(sim.cosine_values(tok, emb, texts, include_special=True)) == 10 + 6 + 3


def test_histogram_agrees_with_the_raw_values(bert, tmp_path):
    tok, emb = bert
    write_mnli(tmp_path, 60, 10, seed=0)
    write_civilcomments(tmp_path, 60, 16, seed=0)
    mnli = mnli_module.load_mnli(tmp_path, "train")
    civil = civilcomments.load_civilcomments(tmp_path).split("train")
    for split in (mnli, civil):
        idx = sim.sample_indices(len(split), 40, seed=1)
        texts = [split.texts[i] for i in idx]
        pairs = [split.pairs[i] for i in idx] if split.pairs else None
        values = sim.cosine_values(tok, emb, texts, pairs, batch_size=7).astype(np.float64)
        hist = sim.cosine_histogram(
            tok, emb, split.texts, split.pairs, n_texts=40, seed=1, bins=400, batch_size=16
        )
        assert hist.n_texts == 40 and hist.n_pairs == len(values) == hist.counts.sum()
        # the number of pairs is sum_i C(k_i, 2) over the texts' k_i tokens
        lengths = [
            len(tok.tokenize(t)) + (len(tok.tokenize(p)) if p else 0)
            for t, p in zip(texts, pairs or [None] * len(texts), strict=True)
        ]
        assert hist.n_pairs == sum(k * (k - 1) // 2 for k in lengths)
        assert hist.mean == pytest.approx(values.mean(), abs=1e-6)
        assert hist.std == pytest.approx(values.std(), abs=1e-5)
        assert 0 < hist.n_identical < hist.n_pairs
        # numpy's histogram on the same edges; a value within float32 rounding of an edge
        # may land in the next bin
        reference, _ = np.histogram(values, hist.edges)
        near_edge = np.abs(values[:, None] - hist.edges[None, :]).min(axis=1) < 1e-6
        assert np.abs(reference - hist.counts).sum() <= 2 * near_edge.sum()
        for band in (0.05, 0.1, 0.5):
            exact = sim.fraction_within(values, band)
            assert 0 < exact < 1
            assert hist.fraction_within(band) == pytest.approx(exact, abs=3 / len(values))


def test_fraction_within():
    values = np.array([-0.3, -0.05, 0.0, 0.02, 0.1, 0.7])
    assert sim.fraction_within(values, 0.1) == pytest.approx(4 / 6)
    hist = sim.CosineHistogram(
        edges=np.linspace(-1, 1, 21),
        counts=np.arange(20),
        n_texts=1,
        n_pairs=190,
        n_identical=0,
        mean=0.0,
        std=0.0,
    )
    # bins of width 0.1: [-0.2, 0.2) is bins 8..11
    assert hist.fraction_within(0.2) == pytest.approx((8 + 9 + 10 + 11) / 190)
    assert hist.fraction_within(1.0) == 1.0
    with pytest.raises(ValueError, match="multiple of the bin width"):
        hist.fraction_within(0.15)
    with pytest.raises(ValueError, match="positive"):
        sim.fraction_within(values, 0.0)


def test_sample_indices_are_seeded():
    a, b = sim.sample_indices(1000, 50, seed=3), sim.sample_indices(1000, 50, seed=3)
    assert np.array_equal(a, b) and len(np.unique(a)) == 50 and np.all(np.diff(a) > 0)
    assert not np.array_equal(a, sim.sample_indices(1000, 50, seed=4))
    assert np.array_equal(sim.sample_indices(10, 50, seed=0), np.arange(10))
    assert np.array_equal(sim.sample_indices(10, None, seed=0), np.arange(10))
