"""Text into Markdown, read back as the same text: the one escaping for every Markdown file
the workflow writes (the figures' `<name>.caption.md`, `claims.md`).

Config text (titles, labels, paths) reaches those files; unescaped, `[x](javascript:...)`
would be a link and `![i](http://host/x.png)` a remote image in any Markdown viewer. The
report's reStructuredText has its own escaping (workflow/report/*.rst, `rst()`), the HTML
files `html.escape`.
"""

from __future__ import annotations

import re

# CommonMark lets any ASCII punctuation be escaped with a backslash; these can start markup
# inside a line: escapes, code, emphasis, links and images, strikethrough, table cells.
_INLINE = re.compile(r"([\\`*_\[\]!~|])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}  # raw HTML and entities, as html.escape
# what opens a block where it starts a line: heading, quote, list item, numbered item
_BLOCK_START = re.compile(r"^(\s*)([#>+-]|\d+[.)])")


def text(value) -> str:
    """`value` as Markdown text: on one line, with no link, image, emphasis, code, HTML or
    block markup left in it."""
    line = " ".join(str(value).split())
    line = "".join(_HTML.get(c, c) for c in line)
    line = _INLINE.sub(r"\\\1", line)
    return _BLOCK_START.sub(lambda m: m[1] + m[2][:-1] + "\\" + m[2][-1], line)
