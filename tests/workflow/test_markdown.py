"""Config text in Markdown stays text: a figure's caption (`<name>.caption.md`)
and claims.md escape titles and labels with one helper, attnbias.workflow.markdown, so no
link, image, emphasis, code, HTML or block markup starts in them. Checked by rendering
with markdown-it (CommonMark, and its GFM table and strikethrough rules).
"""

from __future__ import annotations

import html
import re

import pytest

from attnbias.claims.write import markdown_cell
from attnbias.workflow import markdown

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
def test_a_hostile_label_reads_back_as_itself_and_starts_no_markup(label):
    text, tags = rendered_text(markdown.text(label))
    assert text == label
    assert tags == ["p"]


def test_claims_cells_use_the_same_helper():
    for label in HOSTILE:
        assert markdown_cell(label) == markdown.text(label)
    row = "| " + " | ".join(markdown_cell(c) for c in ("| a | b |", "[x](y)")) + " |"
    table = md.render(f"| h1 | h2 |\n|---|---|\n{row}\n")
    assert table.count("<td>") == 2 and "<a" not in table


def test_plain_text_is_left_as_it_reads():
    assert markdown.text("GD lr=0.1; NGD: max_step=50 (a) 1.5") == (
        "GD lr=0.1; NGD: max_step=50 (a) 1.5"
    )
    # claims.md reads as plain text: comparisons, norms' subscripts, ampersands
    assert markdown.text("slopes -1.9 <= -0.75 < 1; W_mm & u_mm; 1 - cos < 0.01") == (
        "slopes -1.9 <= -0.75 < 1; W_mm & u_mm; 1 - cos < 0.01"
    )
    assert markdown.text("0.863 to 0.896") == "0.863 to 0.896"
    assert rendered_text(markdown.text("1.")) == ("1.", ["p"])  # a bare number opens a list
    # intervals and lists in brackets link nothing: only "](" or "][" can end a link
    interval = "holds for eta in [0.3, 1]; t in [1e4, 3e4]; [a] [b]"
    assert markdown.text(interval) == interval
    assert rendered_text(markdown.text(interval)) == (interval, ["p"])


def test_a_bracket_that_could_end_a_link_is_escaped_wherever_it_stands():
    """Inline links and images end in "](", reference links in "][". A bare "[x]" links
    only to a definition, which no file we write holds: a definition starts a line, and
    escaped text never starts one (HOSTILE's "[ref]: ..."); a document of escaped lines
    therefore links nothing, as rendered here."""
    labels = ("a [x](y)", "a ![i](z)", "a [a [b](c)]", "a [x]\t(y)", "a [x][y]", "[y]: /y")
    document = "\n\n".join(markdown.text(label) for label in labels)
    out = md.render(document)
    assert "<a" not in out and "<img" not in out, document
    text, _ = rendered_text(document)
    assert text.split("\n") == [" ".join(label.split()) for label in labels]
