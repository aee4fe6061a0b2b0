"""Figure captions (attnbias.figures.caption): hostile titles and labels stay text."""

from __future__ import annotations

import html
import re

import pytest

from attnbias.figures import caption

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


@pytest.mark.parametrize("label", HOSTILE)
def test_a_caption_with_a_hostile_title_and_label_is_text(label):
    source = caption.compose(f"Title {label}", f"Optimizers: {label} (GD lr=1).")
    text, tags = rendered_text(source)
    assert tags == ["p", "strong", "p"], source
    assert text == f"Title {label}\nOptimizers: {label} (GD lr=1)."


def test_the_trial_captions_carry_no_link_and_no_remote_image():
    source = caption.compose("[x](javascript:alert(1))", "![i](http://host/x.png)")
    out = md.render(source)
    assert "<a " not in out and "<img" not in out and "javascript:" in out
