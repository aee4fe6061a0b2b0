"""The BERT classifier (attnbias.realdata.bert): offline loading, padding trimmed, SDPA
attention, and a missing model named with its key.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from tiny_runs import bert_data, tiny_bert

from attnbias.data.missing import MissingDataError
from attnbias.realdata import bert, mnli
from attnbias.realdata.bert import trim_padding

# ---------------------------------------------------------------- dynamic padding


def _padded_bert_batch(extra: int):
    """tiny_runs' BERT batch with `extra` more padding columns at the end."""
    batch = bert_data(16, seed=3)
    pad = {k: torch.zeros(len(v), extra, dtype=v.dtype) for k, v in batch.items() if v.dim() == 2}
    return {k: torch.cat([v, pad[k]], dim=1) if k in pad else v for k, v in batch.items()}


def test_trim_padding_cuts_to_the_longest_row_only():
    batch = _padded_bert_batch(extra=4)
    trimmed = trim_padding(batch)
    longest = int(batch["attention_mask"].sum(1).max())
    assert trimmed["input_ids"].shape == (16, longest) < batch["input_ids"].shape
    assert torch.equal(trimmed["labels"], batch["labels"])
    for key in ("input_ids", "attention_mask", "token_type_ids"):
        assert torch.equal(trimmed[key], batch[key][:, :longest])
        assert not batch[key][:, longest:].any()  # only padding was cut


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_dynamic_padding_gives_the_loss_and_gradient_of_fixed_padding(attention):
    model = tiny_bert(seed=0)
    model.config._attn_implementation = attention
    batch = _padded_bert_batch(extra=4)  # 16 columns; the rows hold 6 to 12 tokens
    results = []
    for b in (batch, trim_padding(batch)):
        model.zero_grad()
        inputs = {k: v for k, v in b.items() if k != "labels"}
        loss = F.cross_entropy(model(**inputs).logits, b["labels"])
        loss.backward()
        results.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
    (fixed, g_fixed), (dynamic, g_dynamic) = results
    assert batch["input_ids"].shape[1] > trim_padding(batch)["input_ids"].shape[1]
    torch.testing.assert_close(dynamic, fixed, rtol=1e-6, atol=1e-6)  # float32 rounding
    for a, b in zip(g_dynamic, g_fixed, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- the text task on fixtures


def test_sdpa_bert_gives_the_plain_attention_loss_and_gradient(fixture_root):
    """The fixture BERT loaded with transformers' sdpa attention and with its plain
    ("eager") softmax(QK^T/sqrt(d))V, on a fixture batch with padding: the same logits,
    loss and gradients to float32 rounding."""
    split = mnli.load_mnli(str(fixture_root / "data"), "train")
    results = {}
    for attention in ("sdpa", "eager"):
        tokenizer, model = bert.load_text_model(
            str(fixture_root / "bert"), 3, seed=0, attention=attention
        )
        assert model.config._attn_implementation == attention
        batch = bert.tokenize_split(tokenizer, split, 24)
        assert not batch["attention_mask"].all()  # the mask matters
        inputs = {k: v for k, v in batch.items() if k != "labels"}
        logits = model(**inputs).logits
        loss = F.cross_entropy(logits, batch["labels"])
        loss.backward()
        results[attention] = (logits.detach(), loss.detach(), [p.grad for p in model.parameters()])
    (l_s, loss_s, g_s), (l_e, loss_e, g_e) = results["sdpa"], results["eager"]
    torch.testing.assert_close(l_s, l_e, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(loss_s, loss_e, rtol=1e-6, atol=1e-7)
    for a, b in zip(g_s, g_e, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


# ---------------------------------------------------------------------------------------
# BERT


def test_tiny_bert_loads_offline_by_path_and_classifies_a_batch(roots, offline):
    tok, model = bert.load_text_model(str(roots / "bert"), num_labels=3, seed=0)
    vocab = (roots / "bert/vocab.txt").read_text().split("\n")
    assert tok.convert_tokens_to_ids("maybe") == vocab.index("maybe")  # vocab.txt in force
    split = mnli.load_mnli(roots / "jsonl", "test")
    data = bert.tokenize_split(tok, split, max_length=32)
    n = len(split)
    assert set(data) == {"input_ids", "attention_mask", "token_type_ids", "labels"}
    assert all(v.dtype == torch.int64 and len(v) == n for v in data.values())
    assert data["input_ids"].shape == (n, 32) and torch.equal(
        data["labels"], torch.tensor(split.labels)
    )
    # row 0 is [CLS] premise [SEP] hypothesis [SEP], then padding
    p, h = (tok.tokenize(s) for s in (split.premise[0], split.hypothesis[0]))
    length = len(p) + len(h) + 3
    assert data["attention_mask"][0].sum() == length
    assert data["token_type_ids"][0, len(p) + 2 : length].eq(1).all()
    assert tok.convert_ids_to_tokens(data["input_ids"][0, : len(p) + 1].tolist()) == ["[CLS]", *p]
    assert data["input_ids"][0, length:].eq(tok.pad_token_id).all()
    model.eval()
    with torch.no_grad():
        out = model(**{k: v[:8] for k, v in data.items()})
    assert out.logits.shape == (8, 3) and torch.isfinite(out.loss)
    assert out.logits.argmax(1).max() < 3


def test_single_texts_and_truncation(roots, civil):
    tok, _ = bert.load_text_model(str(roots / "bert"), num_labels=2)
    data = bert.tokenize_split(tok, civil.split("train"), max_length=6, chunk=5)
    assert data["input_ids"].shape == (48, 6) and data["token_type_ids"].eq(0).all()
    assert data["attention_mask"].eq(1).all()  # every comment is longer than 6 tokens
    assert data["input_ids"][:, -1].eq(tok.sep_token_id).all()


def test_classifier_head_seed_is_reproducible_and_private(roots):
    heads = {}
    for seed in (0, 0, 1):
        torch.manual_seed(123)
        _, model = bert.load_text_model(str(roots / "bert"), num_labels=2, seed=seed)
        heads.setdefault(seed, []).append(model.classifier.weight.detach().clone())
        after = torch.rand(3)
        torch.manual_seed(123)
        assert torch.equal(after, torch.rand(3))  # the global stream was not consumed
    assert torch.equal(heads[0][0], heads[0][1]) and not torch.equal(heads[0][0], heads[1][0])


def test_missing_model_names_model_key_and_how(roots, tmp_path, offline, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    cases = {
        str(tmp_path / "no_such_folder"): "No model folder",
        "./models/bert": "No model folder",
        "attnbias-tests/no-such-model": "HF_HUB_OFFLINE",
        str(roots): "no config.json",  # a folder, but not a model
    }
    for name, why in cases.items():
        with pytest.raises(MissingDataError) as err:
            bert.load_text_model(name, num_labels=2)
        msg = str(err.value)
        assert why in msg and name in msg and "real_data.models.bert" in msg
        assert "hf download" in msg and "save_pretrained" in msg


@pytest.mark.parametrize("head_unused", [True, False])
def test_the_untrained_head_report_is_silenced_where_the_head_is_unused(
    head_unused, roots, capfd, caplog
):
    """transformers printed "classifier.weight MISSING ... Consider training" twice while
    fig10's embeddings were read (the check's load, the job's); a caller that never uses
    the head silences it. The control: a training load keeps it (the head is trained).
    The tiny BERT is saved without a head, as MiniLM's weights are."""
    bert.load_text_model(str(roots / "bert"), num_labels=2, head_unused=head_unused)
    printed = "".join(capfd.readouterr()) + caplog.text
    assert ("MISSING" in printed) is not head_unused, printed
