"""Real-data tasks (attnbias.realdata.tasks): the text task's attention and padding."""

from __future__ import annotations

import pytest
from fixtures_text import fixture_vocab, write_mnli, write_tiny_bert

from attnbias.realdata import tasks
from attnbias.realdata.bert import trim_padding

# ---------------------------------------------------------------- the text task on fixtures


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("text")
    write_mnli(root / "data", n_train=40, n_test=16, seed=0)
    write_tiny_bert(root / "bert", fixture_vocab())
    return root


def test_text_task_has_sdpa_attention_and_dynamic_padding(fixture_root):
    settings = {
        "dataset": "mnli",
        "model_path": str(fixture_root / "bert"),
        "max_length": 48,
        "train": {"train_samples": None, "test_samples": None},
    }
    task = tasks.build(settings, seed=0, data_root=str(fixture_root / "data"))
    assert task.model.config._attn_implementation == "sdpa"
    assert task.collate is trim_padding
    assert task.train["input_ids"].shape[1] == 48  # padded once to max_length, trimmed per batch
    assert trim_padding(task.train)["input_ids"].shape[1] < 48
