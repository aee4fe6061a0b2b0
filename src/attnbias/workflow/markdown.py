"""Text into Markdown, read back as the same text: the one escaping for every Markdown file
the workflow writes (the figures' `<name>.caption.md`, `claims.md`).

Config text (titles, labels, paths) reaches those files; unescaped, `[x](javascript:...)`
would be a link and `![i](http://host/x.png)` a remote image in any Markdown viewer. The
report's reStructuredText has its own escaping (workflow/report/*.rst, `rst()`), the HTML
files `html.escape`.
"""

from __future__ import annotations

import re

# CommonMark lets any ASCII punctuation be escaped with a backslash. Escaped always: what
# starts markup anywhere in a line (escapes, code, emphasis, strikethrough, table cells).
# Escaped only where it could start markup, so that text such as "W_mm", "t in [1, 10]",
# "slope <= -0.75" and "a & b" reads in the file as it reads rendered: "_" unless between
# two letters or digits (CommonMark opens no emphasis there); "]" before "(" or "[" (an
# inline link or image, a reference link: "[x]" alone links only to a definition, and a
# definition starts a line, where "[" is escaped below); "<" before what opens a tag or an
# autolink; "&" before what reads as an entity.
_INLINE = re.compile(r"([\\`*~|])")
_LINK_END = re.compile(r"\](?=[(\[])")
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
# what opens a block where it starts a line: heading, quote, list item, link reference
# definition, numbered item (a number only before a space: "0.86 to 0.9" opens no list)
_BLOCK_START = re.compile(r"^(\s*)([#>+\[-]|\d+[.)](?=\s|$))")


def text(value) -> str:
    """`value` as Markdown text: on one line, with no link, image, emphasis, code, HTML or
    block markup left in it."""
    line = " ".join(str(value).split())
    line = _INLINE.sub(r"\\\1", line)
    line = _LINK_END.sub(r"\\]", line)
    line = _UNDERSCORE.sub(r"\\_", line)
    line = _TAG.sub(r"\\<", line)
    line = _ENTITY.sub(r"\\&", line)
    return _BLOCK_START.sub(lambda m: m[1] + m[2][:-1] + "\\" + m[2][-1], line)
