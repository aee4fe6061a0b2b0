"""Data sources (attnbias.realdata.sources): a text source's presence and fixture flag."""

from __future__ import annotations

import json

import pytest
from fixtures_text import write_mnli

from attnbias.realdata import sources
from attnbias.realdata.errors import FIXTURE_MARKER


def test_text_source_checks_presence_and_fixture_flag(roots, tmp_path):
    src = sources.text_source("civilcomments", roots / "civil")
    assert src["fixture"] and src["layout"] == "wilds"
    assert src["path"].endswith("civilcomments_v1.0") and len(src["files"]) == 2
    json.dumps(src)  # goes into source.json as it is
    write_mnli(tmp_path, 5, 5, seed=0, layout="tsv")
    (tmp_path / "MNLI" / FIXTURE_MARKER).unlink()
    assert sources.text_source("mnli", tmp_path)["fixture"] is False
    with pytest.raises(ValueError, match="unknown text dataset"):
        sources.text_source("sst2", tmp_path)
