"""The report's docutils settings (workflow/report/docutils.conf): the raw and include
directives are off, so no text of a config reaches the report as HTML or reads a file."""

from __future__ import annotations

from io import StringIO
from pathlib import Path


def test_docutils_config_turns_raw_and_include_off(monkeypatch):
    from docutils.core import publish_parts

    conf = Path(__file__).parents[2] / "workflow/report/docutils.conf"
    monkeypatch.setenv("DOCUTILSCONFIG", str(conf))
    text = ".. raw:: html\n\n   <b id=raw>x</b>\n\n.. include:: /etc/hostname\n"
    quiet = {"warning_stream": StringIO()}  # the warnings also go into the body
    body = publish_parts(text, writer="html", settings_overrides=quiet)["body"]
    assert "<b id=raw>" not in body
    assert "&quot;raw&quot; directive disabled" in body
    assert "&quot;include&quot; directive disabled" in body
