"""Labels that would start Markdown or HTML if not escaped (links, images, emphasis, code,
HTML, block markup, ...), and markdown-it's rendering of a text (CommonMark with GFM
tables and strikethrough) as its text and tags: for the tests that captions and Markdown
cells stay text (tests/figures/test_caption.py, tests/workflow/test_markdown.py). Importing
it skips the importing test module where markdown-it is not installed."""

from __future__ import annotations

import html
import re

import pytest

md = pytest.importorskip("markdown_it").MarkdownIt("commonmark").enable(["table", "strikethrough"])


HOSTILE = [
    "[x](javascript:alert(1))",
    "![i](http://host/x.png)",
    "GD *bold* __strong__ `code` ~~gone~~",
    "<img src=x onerror=alert(1)> &amp; &#60;b&#62;",
    "# heading",
    "- item",
    "+ item",
    "> quote",
    "12. numbered",
    "3) numbered",
    "0.86 to 0.9",
    "a \\[x](y) backslash before a bracket",
    "ends in a backslash \\",
    "[ref]: http://host/x",
    "| a | b |",
    "$\\eta$ = 0.1, W_mm, ||W||",
    "a <b>bold</b> <http://host> _x_ x_ _x a_b_ <!-- c --> &lt;&#60; & <= _",
]


def rendered_text(source: str) -> tuple[str, list[str]]:
    """The HTML's text (tags removed, entities read) and the names of its tags."""
    out = md.render(source)
    tags = re.findall(r"<([a-z0-9]+)", out)
    return html.unescape(re.sub(r"<[^>]+>", "", out)).strip(), tags
