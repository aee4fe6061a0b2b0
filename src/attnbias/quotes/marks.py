"""The inline marker that names a quoted number (or a sentence the build decides) where it
stands on its page:

    NGD first crosses 1e-3 at t = <!--q:fig2_uncapped.ngd.first.1e-3-->819 to 1,137<!--/q-->

Two HTML comments around the quoted text, the opening one naming the entry of the page's
registry (attnbias.quotes.pages) that computes it. GitHub and every CommonMark renderer
drop the comments, so the page reads as before; the words around a marker are free to
change, and only what stands between the two comments is the build's. A name is letters,
digits and `_ . + = -`; it may stand more than once on its page (each is checked). A
marker must not begin a line: a line that starts with `<!--` is an HTML block to
Markdown, which would print the rest of the line unrendered. In code (a fenced block or
a `span`) a marker is text, not a marker: that is how the docs show the form. Whole
generated sections use block markers of their own (attnbias.quotes.quote.markers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPEN = "<!--q:{}-->"
CLOSE = "<!--/q-->"
NAME = r"[\w.+=-]+"
_TAG = re.compile(rf"<!--q:({NAME})-->|<!--/q-->|<!--q:")
_CODE = re.compile(r"^ {0,3}```.*?^ {0,3}```|`[^`\n]+`", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Mark:
    """One marker on a page: its name, the text between the comments and where it stands
    (offsets into the page: the whole marker, the text; the line of its opening)."""

    name: str
    text: str
    start: int
    end: int
    inner: tuple[int, int]
    line: int


def mark(name: str, text: str) -> str:
    """`text` marked with `name`."""
    return OPEN.format(name) + text + CLOSE


def rendered(text: str) -> str:
    """`text` as a Markdown renderer shows it: every marker removed, the values kept."""
    return _TAG.sub("", text)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def find(text: str) -> tuple[list[Mark], list[tuple[int, str]]]:
    """Every marker on a page, and the errors (line, what) of those that are not well
    formed: an opening without its close, a close without its opening, a nested or
    unnamed one, one at the start of a line."""
    marks, errors, opened = [], [], None
    prose = _CODE.sub(lambda code: " " * len(code[0]), text)  # the same offsets
    for tag in _TAG.finditer(prose):
        line = line_of(text, tag.start())
        if tag[0] == CLOSE:
            if opened is None:
                errors.append((line, "a marker's close without its opening"))
                continue
            name, start, inner = opened
            opened = None
            marks.append(Mark(name, text[inner : tag.start()], start, tag.end(),
                              (inner, tag.start()), line_of(text, start)))  # fmt: skip
            continue
        if tag[1] is None:
            errors.append((line, "a marker without a name (<!--q:NAME-->)"))
            continue
        if opened is not None:
            errors.append((line, f"marker {opened[0]!r} is not closed before {tag[1]!r}"))
        opened = (tag[1], tag.start(), tag.end())
        if not text[text.rfind("\n", 0, tag.start()) + 1 : tag.start()].strip():
            errors.append((line, f"marker {tag[1]!r} begins a line (Markdown: an HTML block)"))
    if opened is not None:
        errors.append((line_of(text, opened[1]), f"marker {opened[0]!r} is not closed"))
    return marks, errors
